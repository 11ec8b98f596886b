// RequestAllocation and its FM outcomes (SPEC §4.4): journal first, exact partitions, stale
// partitions cleared, idempotent re-requests, every refusal with a clear reason.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "journal_text/event_summary.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::FmError;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class AllocationTest : public ::testing::Test {
 protected:
  void SetUp() override { d.Boot(node); }
  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

// FM connected but its partition table not listed yet (the first list failed or is still on its
// way): Allocate is refused as "FM not usable" (kubelet retries), with nothing journaled but the
// request and its rejection, and nothing for FM to do.
TEST(AllocationBeforeTheTable, IsRefusedUntilTheFirstPartitionList) {
  const auto node = H100Node();
  Driver d;
  StartPlugin start;  // Driver::Boot up to the FM connection, without ObserveFabricState
  start.now = d.now;
  start.version = "test";
  start.fabric_manager_enabled = true;
  d.Run(start);
  d.Run(gfp::testing::InventoryOf(node, d.now));
  d.Run(gfp::testing::MappingOf(node, d.now));
  ObserveFabricManagerConnection connected;
  connected.now = d.now;
  connected.connected = true;
  connected.address = "/run/nvidia-fabricmanager/fmpm.sock";
  d.Run(connected);
  ASSERT_TRUE(d.state.fm_connected);
  const std::size_t mark = d.journal.size();
  Decision refused = d.Run(d.Request(node.resource, Modules(node, {1, 2})));
  EXPECT_EQ(refused.refusal, "the Fabric Manager partition table is not known yet");
  EXPECT_EQ(refused.refusal_kind, RefusalKind::kFabricManagerUnusable);
  EXPECT_TRUE(refused.effects.empty());
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("AllocationRequested", "AllocationRejected"));
}

TEST_F(AllocationTest, ExactPartitionIsActivatedBeforeTheGrant) {
  auto request = d.Request(node.resource, Modules(node, {1, 3}));
  const std::size_t mark = d.journal.size();
  Decision first = d.Run(request);
  EXPECT_TRUE(first.refusal.empty()) << first.refusal;
  // The intent is journaled and the effect asked for; nothing is granted yet.
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("AllocationRequested", "PartitionActivationRequested"));
  ASSERT_EQ(first.effects.size(), 1u);
  EXPECT_EQ(first.effects[0].kind, Effect::Kind::kActivatePartition);
  EXPECT_EQ(first.effects[0].partition_id, 3u);
  EXPECT_EQ(d.state.allocations.at(first.allocation_id).status, AllocationStatus::kRequested);

  RecordFabricManagerOutcome outcome{d.now, IntentKind::kActivate, 3, gfp::testing::FmOk()};
  Decision second = d.Run(outcome);
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("AllocationRequested", "PartitionActivationRequested",
                                              "PartitionActivated", "AllocationGranted"));
  EXPECT_TRUE(second.effects.empty());
  EXPECT_EQ(d.state.active.at(3).owner, first.allocation_id);
  EXPECT_EQ(d.state.allocations.at(first.allocation_id).partition, 3u);
}

TEST_F(AllocationTest, MisalignedRequestIsRejectedNamingThePartitionsOfThatSize) {
  const std::string refusal = d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 2})));
  EXPECT_THAT(refusal, HasSubstr("do not form one Fabric Manager partition"));
  EXPECT_THAT(refusal, HasSubstr("3=[0000:c3:00.0,0000:d1:00.0]"));
  EXPECT_TRUE(d.state.active.empty());
  EXPECT_TRUE(d.state.allocations.empty());
  EXPECT_EQ(d.TypesSince(d.journal.size() - 2),
            (std::vector<std::string>{"AllocationRequested", "AllocationRejected"}));
}

TEST_F(AllocationTest, SizeWithoutPartitionsIsRejected) {
  const std::string refusal = d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 2, 3})));
  EXPECT_THAT(refusal, HasSubstr("no partition has 3 GPUs"));
}

TEST_F(AllocationTest, StalePartitionsAreDeactivatedFirst) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {2, 4}))), "");
  const std::size_t mark = d.journal.size();
  // kubelet hands GPUs 1-4 to a new VM: both 2-GPU partitions are stale.
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 2, 3, 4}))), "");
  EXPECT_THAT(
      d.TypesSince(mark),
      ElementsAre("AllocationRequested", "AllocationReleased", "AllocationReleased",
                  "PartitionDeactivationRequested", "PartitionDeactivated",
                  "PartitionDeactivationRequested", "PartitionDeactivated",
                  "PartitionActivationRequested", "PartitionActivated", "AllocationGranted"));
  EXPECT_EQ(d.state.active.size(), 1u);
  EXPECT_TRUE(d.state.active.count(1));
  EXPECT_EQ(d.state.allocations.size(), 1u);
}

TEST_F(AllocationTest, ReRequestOfTheSameDevicesMakesNoFabricManagerCall) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {5, 6, 7, 8}))), "");
  const std::size_t mark = d.journal.size();
  Decision again = d.Run(d.Request(node.resource, Modules(node, {8, 7, 6, 5})));
  EXPECT_TRUE(again.effects.empty());
  EXPECT_EQ(again.refusal, "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("AllocationRequested", "AllocationReleased", "AllocationGranted"));
  EXPECT_EQ(d.state.active.at(2).owner, again.allocation_id);
  EXPECT_EQ(d.journal[mark + 1].allocation_released().reason(),
            events::AllocationReleased::REASON_SUPERSEDED);
}

TEST_F(AllocationTest, FabricManagerFailureRejectsWithTheCodeName) {
  const std::string refusal =
      d.RunToCompletion(d.Request(node.resource, Modules(node, {1})),
                        [](const Effect&) { return FmError(-10, "FM_ST_NVLINK_ERROR"); });
  EXPECT_THAT(refusal, HasSubstr("FM_ST_NVLINK_ERROR"));
  EXPECT_THAT(refusal, HasSubstr("partition 7"));
  EXPECT_TRUE(d.state.active.empty());
  EXPECT_TRUE(d.state.intents.empty());
  EXPECT_EQ(d.journal.back().allocation_rejected().fm().name(), "FM_ST_NVLINK_ERROR");
}

TEST_F(AllocationTest, FailedStaleDeactivationRejectsAndKeepsThePartition) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  const std::string refusal =
      d.RunToCompletion(d.Request(node.resource, Modules(node, {1})), [](const Effect& e) {
        return e.kind == Effect::Kind::kDeactivatePartition ? FmError(-2, "FM_ST_GENERIC_ERROR")
                                                            : gfp::testing::FmOk();
      });
  EXPECT_THAT(refusal, HasSubstr("could not deactivate stale partition 3"));
  EXPECT_TRUE(d.state.active.count(3));
  EXPECT_TRUE(d.state.active.at(3).owner.empty());  // its allocation was released
}

TEST_F(AllocationTest, DeactivatingAnAlreadyInactivePartitionCountsAsDone) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  const std::string refusal =
      d.RunToCompletion(d.Request(node.resource, Modules(node, {1})), [](const Effect& e) {
        return e.kind == Effect::Kind::kDeactivatePartition ? FmError(-4, "FM_ST_UNINITIALIZED")
                                                            : gfp::testing::FmOk();
      });
  EXPECT_EQ(refusal, "");
  EXPECT_TRUE(d.state.active.count(7));
  EXPECT_FALSE(d.state.active.count(3));
}

TEST_F(AllocationTest, BadInputIsRefusedWithASpecificMessage) {
  struct Case {
    std::vector<std::string> ids;
    std::string resource;
    std::string expected;
  };
  const std::string r = node.resource;
  const std::vector<Case> cases = {
      {{}, r, "empty allocation request"},
      {{"0000:99:00.0"}, r, "unknown device 0000:99:00.0"},
      {{Modules(node, {1})[0], Modules(node, {1})[0]}, r, "requested twice"},
      {{std::string(64, 'a')}, r, "longer than 63 characters"},
      {{"../../etc/passwd"}, r, "path or control character"},
      {{"0000:c3:00.0\n"}, r, "path or control character"},
      {{Modules(node, {1})[0]}, "nvidia.com/OTHER", "belongs to nvidia.com/GH100_H100_SXM5_80GB"},
  };
  for (const auto& c : cases) {
    const std::size_t mark = d.journal.size();
    const std::string refusal = d.RunToCompletion(d.Request(c.resource, c.ids));
    EXPECT_THAT(refusal, HasSubstr(c.expected)) << "ids[0]=" << (c.ids.empty() ? "" : c.ids[0]);
    EXPECT_EQ(d.TypesSince(mark),
              (std::vector<std::string>{"AllocationRequested", "AllocationRejected"}));
  }
  EXPECT_TRUE(d.state.active.empty());
}

TEST_F(AllocationTest, UnhealthyDeviceIsRefused) {
  d.Run(ObserveDeviceHealth{d.now, Modules(node, {2})[0], false, "/dev/vfio/11 removed"});
  EXPECT_THAT(d.RunToCompletion(d.Request(node.resource, Modules(node, {2}))),
              HasSubstr("is unhealthy: /dev/vfio/11 removed"));
}

TEST_F(AllocationTest, NoAllocationWithoutFabricManager) {
  ObserveFabricManagerConnection down;
  down.now = d.now;
  down.connected = false;
  down.reason = "connection lost";
  d.Run(down);
  EXPECT_THAT(d.RunToCompletion(d.Request(node.resource, Modules(node, {1}))),
              HasSubstr("Fabric Manager is not connected"));
}

TEST_F(AllocationTest, DegradedPartitionIsRefused) {
  auto partitions = gfp::testing::PartitionsOf(node);
  partitions[3].set_nvlinks_available(12);  // partition 3 (modules 1,3)
  ObserveFabricState table;
  table.now = d.now;
  table.partitions = partitions;
  d.Run(table);
  EXPECT_THAT(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))),
              HasSubstr("partition 3 is degraded (12/18 NVLinks)"));
}

TEST(AllocationWithoutFabricManager, IsGrantedAtOnceAndSupersedesOlderHolders) {
  Driver d;
  auto node = H100Node();
  d.Boot(node, /*fm=*/false);
  Decision first = d.Run(d.Request(node.resource, Modules(node, {1, 2})));
  EXPECT_TRUE(first.effects.empty());
  EXPECT_EQ(d.state.allocations.at(first.allocation_id).status, AllocationStatus::kGranted);
  Decision second = d.Run(d.Request(node.resource, Modules(node, {2, 3})));
  EXPECT_FALSE(d.state.allocations.count(first.allocation_id));
  EXPECT_EQ(d.state.allocations.at(second.allocation_id).status, AllocationStatus::kGranted);
}

// Issue 8: a refused request of 3,000 IDs of 1,000 bytes once journaled all of them (3 MB), and
// an ID with a newline forged lines wherever the reason was printed.
TEST_F(AllocationTest, RefusedRequestIsJournaledBoundedAndEscaped) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3000; ++i) ids.push_back("a\nforged" + std::string(990, 'x'));
  const std::size_t mark = d.journal.size();
  Decision refused = d.Run(d.Request(node.resource, ids));
  EXPECT_THAT(refused.refusal, HasSubstr("is longer than 63 characters"));
  EXPECT_EQ(refused.refusal.find('\n'), std::string::npos) << refused.refusal;
  std::size_t bytes = 0;
  for (std::size_t i = mark; i < d.journal.size(); ++i) bytes += d.journal[i].ByteSizeLong();
  EXPECT_LT(bytes, 2048u);
  const auto& requested = d.journal[mark].allocation_requested();
  EXPECT_EQ(requested.device_ids_size(), 8);
  EXPECT_EQ(requested.device_ids_omitted(), 2992u);
  for (const auto& id : requested.device_ids()) EXPECT_EQ(id.find('\n'), std::string::npos);
  EXPECT_THAT(journal_text::SummarizeEvent(d.journal[mark]), HasSubstr("… and 2992 more IDs"));
  const auto& rejected = d.journal[mark + 1].allocation_rejected();
  EXPECT_THAT(rejected.reason(), HasSubstr("… and 2992 more IDs not journaled"));
  EXPECT_EQ(rejected.reason().find('\n'), std::string::npos);
}

TEST_F(AllocationTest, AcceptedRequestKeepsEveryId) {
  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  const auto& requested = d.journal[mark].allocation_requested();
  EXPECT_EQ(requested.device_ids_size(), 2);
  EXPECT_EQ(requested.device_ids_omitted(), 0u);
}

// A GPU mapped to a module FM's table does not have is refused with that reason.
TEST_F(AllocationTest, GpuWithModuleUnknownToFabricManagerIsRefusedSayingSo) {
  auto mapping = gfp::testing::MappingOf(node, ++d.now);
  for (auto& a : mapping.assignments) {
    if (a.module_id() == 1) a.set_module_id(99);
  }
  d.Run(mapping);
  EXPECT_EQ(GpusWithModulesUnknownToFabricManager(d.state),
            (std::map<Bdf, ModuleId>{{Modules(node, {1})[0], 99}}));
  Decision refused = d.Run(d.Request(node.resource, {Modules(node, {1})[0]}));
  EXPECT_THAT(refused.refusal, HasSubstr("is mapped to module 99, which Fabric Manager's "
                                         "partition table does not have"));
}

}  // namespace
}  // namespace gfp::sm
