// After the grant: binding to pods, release, drift between FM and the journal, FM resync,
// re-activation before container start.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d.Boot(node);
    ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 2, 3, 4}))), "");
    vm = d.state.active.at(1).owner;
  }
  ObservePodResources PodHolding(std::vector<std::string> ids) {
    PodContainerDevices c{"vms", "virt-launcher-a", "compute", node.resource, std::move(ids)};
    return ObservePodResources{d.now, {c}};
  }
  ObserveFabricState FabricState(std::set<std::uint32_t> active) {
    ObserveFabricState f;
    f.now = d.now;
    f.partitions = gfp::testing::PartitionsOf(node, active);
    return f;
  }
  gfp::testing::NodeFixture node = H100Node();
  Driver d;
  AllocationId vm;
};

TEST_F(LifecycleTest, PodIsBoundOnce) {
  const std::size_t mark = d.journal.size();
  d.Run(PodHolding(Modules(node, {1, 2, 3, 4})));
  d.Run(PodHolding(Modules(node, {1, 2, 3, 4})));
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("AllocationBound"));
  const Allocation& a = d.state.allocations.at(vm);
  EXPECT_EQ(a.status, AllocationStatus::kBound);
  EXPECT_EQ(a.pod_namespace + "/" + a.pod_name + "/" + a.container_name,
            "vms/virt-launcher-a/compute");
}

TEST_F(LifecycleTest, ReleaseDeactivatesThePartition) {
  const std::size_t mark = d.journal.size();
  ReleaseAllocation release;
  release.now = d.now;
  release.allocation_id = vm;
  EXPECT_EQ(d.RunToCompletion(release), "");
  EXPECT_THAT(
      d.TypesSince(mark),
      ElementsAre("AllocationReleased", "PartitionDeactivationRequested", "PartitionDeactivated"));
  EXPECT_TRUE(d.state.active.empty());
  EXPECT_TRUE(d.state.allocations.empty());
}

TEST_F(LifecycleTest, FailedReleaseLeavesAnOrphanThatCanBeRetried) {
  ReleaseAllocation release;
  release.now = d.now;
  release.allocation_id = vm;
  d.RunToCompletion(release, [](const Effect&) {
    return gfp::testing::FmError(-9, "FM_ST_CONNECTION_NOT_VALID");
  });
  ASSERT_TRUE(d.state.active.count(1));
  EXPECT_TRUE(d.state.active.at(1).owner.empty());
  EXPECT_EQ(d.RunToCompletion(ReleaseOrphanPartition{d.now, 1, "retry"}), "");
  EXPECT_TRUE(d.state.active.empty());
}

TEST_F(LifecycleTest, PartitionLostInFabricManagerIsReactivatedForItsPod) {
  const std::size_t mark = d.journal.size();
  auto f = FabricState({});
  f.pod_holders_known = true;
  f.held_allocations = {vm};
  EXPECT_EQ(d.RunToCompletion(f), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("DriftDetected", "PartitionActivationRequested", "PartitionActivated"));
  EXPECT_EQ(d.state.active.at(1).owner, vm);
}

// Found by the simulation test (GFP_SIM_SEED=187): a failed repair must be retried on the next
// observation although the journal and FM then agree the partition is inactive.
TEST_F(LifecycleTest, FailedRepairIsRetriedOnTheNextObservation) {
  auto f = FabricState({});
  f.pod_holders_known = true;
  f.held_allocations = {vm};
  d.RunToCompletion(f,
                    [](const Effect&) { return gfp::testing::FmError(-10, "FM_ST_NVLINK_ERROR"); });
  ASSERT_FALSE(d.state.active.count(1));
  ASSERT_EQ(d.state.allocations.at(vm).partition, 1u);
  const std::size_t mark = d.journal.size();
  f.now = ++d.now;
  EXPECT_EQ(d.RunToCompletion(f), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("PartitionActivationRequested", "PartitionActivated"));
  EXPECT_EQ(d.state.active.at(1).owner, vm);
}

// Found by the simulation test (GFP_SIM_SEED=10241): a repair that timed out and then took effect
// in FM showed up as FM-only drift and was adopted without an owner although the running pod's
// granted allocation names it; it must go back to that allocation.
TEST_F(LifecycleTest, RepairThatTookEffectLateGoesBackToItsAllocation) {
  auto f = FabricState({});
  f.pod_holders_known = true;
  f.held_allocations = {vm};
  d.RunToCompletion(f, [](const Effect&) { return gfp::testing::FmError(-5, "FM_ST_TIMEOUT"); });
  ASSERT_FALSE(d.state.active.count(1));
  const std::size_t mark = d.journal.size();
  auto late = FabricState({1});  // the call completed on FM's side after the deadline
  late.now = ++d.now;            // pod holders unknown: an observation from Allocate
  EXPECT_EQ(d.RunToCompletion(late), "");
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("DriftDetected"));
  ASSERT_TRUE(d.state.active.count(1));
  EXPECT_EQ(d.state.active.at(1).owner, vm);
  EXPECT_FALSE(d.state.active.at(1).adopted);
}

// A partition no live allocation names is adopted ownerless, as before.
TEST_F(LifecycleTest, LateActivationOfAPartitionNoAllocationNamesIsAdoptedOwnerless) {
  const std::size_t mark = d.journal.size();
  auto late = FabricState({1, 6});
  late.now = ++d.now;
  EXPECT_EQ(d.RunToCompletion(late), "");
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("DriftDetected"));
  ASSERT_TRUE(d.state.active.count(6));
  EXPECT_TRUE(d.state.active.at(6).owner.empty());
  EXPECT_TRUE(d.state.active.at(6).adopted);
}

// The audit trail says FM was down after a restart even though nothing "changed".
TEST_F(LifecycleTest, UnreachableFabricManagerAfterAStartIsJournaledOnce) {
  StartPlugin start;
  start.now = ++d.now;
  start.fabric_manager_enabled = true;
  d.Run(start);
  ObserveFabricManagerConnection down;
  down.now = ++d.now;
  down.reason = "connect failed";
  down.fm = gfp::testing::FmError(-9, "FM_ST_CONNECTION_NOT_VALID");
  const std::size_t mark = d.journal.size();
  d.Run(down);
  d.Run(down);
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("FabricManagerDisconnected"));
}

TEST_F(LifecycleTest, PartitionLostWhileNoPodHoldsItIsNotReactivated) {
  auto f = FabricState({});
  f.pod_holders_known = true;
  EXPECT_EQ(d.RunToCompletion(f), "");
  EXPECT_TRUE(d.state.active.empty());
  EXPECT_TRUE(d.state.allocations.count(vm));
}

TEST_F(LifecycleTest, UnknownActivePartitionIsAdoptedAndCanBeReleased) {
  const std::size_t mark = d.journal.size();
  d.RunToCompletion(FabricState({1, 6}));
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("DriftDetected"));
  EXPECT_TRUE(d.state.active.at(6).adopted);
  EXPECT_EQ(d.RunToCompletion(ReleaseOrphanPartition{d.now, 6, "no pod holds it"}), "");
  EXPECT_FALSE(d.state.active.count(6));
  EXPECT_THAT(d.RunToCompletion(ReleaseOrphanPartition{d.now, 1, "x"}), HasSubstr("owned by"));
}

TEST_F(LifecycleTest, NoDriftJudgedWhileATransitionIsInFlight) {
  Decision pending = d.Run(d.Request(node.resource, Modules(node, {5, 7})));
  ASSERT_EQ(pending.effects.size(), 1u);
  const std::size_t mark = d.journal.size();
  d.Run(FabricState({1, 0}));
  EXPECT_TRUE(d.TypesSince(mark).empty());
}

TEST_F(LifecycleTest, ResyncHandsTheJournalsActiveSetToFabricManager) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {6, 8}))), "");
  Decision resync = d.Run(ResyncFabricManager{d.now});
  ASSERT_EQ(resync.effects.size(), 1u);
  EXPECT_EQ(resync.effects[0].partition_ids, (std::vector<PartitionId>{1, 6}));
  d.Run(RecordResyncOutcome{d.now, resync.effects[0].partition_ids, gfp::testing::FmOk()});
  EXPECT_EQ(d.journal.back().fabric_manager_resynced().partition_ids_size(), 2);
}

// The adapter's decoder refuses duplicate ids; the state machine checks again, since a table it
// accepted would key partitions by id. Nothing is journaled and the known table stays.
TEST_F(LifecycleTest, TableListingAPartitionTwiceIsRefusedAndChangesNothing) {
  const auto before = d.state.partitions;
  ASSERT_FALSE(before.empty());
  auto f = FabricState({});
  f.partitions.push_back(f.partitions.front());
  const std::size_t mark = d.journal.size();
  Decision refused = d.Run(f);
  EXPECT_EQ(refused.refusal, "Fabric Manager listed partition " +
                                 std::to_string(f.partitions.front().id()) + " twice");
  EXPECT_EQ(refused.refusal_kind, RefusalKind::kNotServable);
  EXPECT_TRUE(refused.events.empty());
  EXPECT_TRUE(refused.effects.empty());
  EXPECT_EQ(d.journal.size(), mark);
  EXPECT_EQ(d.state.partitions, before);
}

TEST_F(LifecycleTest, PreStartReactivatesOnlyWhenNeeded) {
  EnsurePartitionActive ensure{d.now, Modules(node, {4, 3, 2, 1})};
  Decision nothing = d.Run(ensure);
  EXPECT_TRUE(nothing.effects.empty());
  EXPECT_EQ(nothing.refusal, "");
  auto f = FabricState({});
  f.pod_holders_known = true;  // no pod yet: drift does not re-activate
  d.RunToCompletion(f);
  ASSERT_FALSE(d.state.active.count(1));
  EXPECT_EQ(d.RunToCompletion(ensure), "");
  EXPECT_EQ(d.state.active.at(1).owner, vm);
  EXPECT_THAT(d.RunToCompletion(EnsurePartitionActive{d.now, Modules(node, {5})}),
              HasSubstr("no granted allocation holds exactly devices"));
}

TEST_F(LifecycleTest, ModuleMappingMayNotMoveGpusOfPartitionsInUse) {
  auto mapping = gfp::testing::MappingOf(node, d.now);
  std::swap(mapping.assignments[0], mapping.assignments[7]);
  auto m0 = mapping.assignments[0].module_id();
  mapping.assignments[0].set_module_id(mapping.assignments[7].module_id());
  mapping.assignments[7].set_module_id(m0);
  mapping.path = "/other.json";
  Decision d2 = d.Run(mapping);
  EXPECT_THAT(d2.refusal, HasSubstr("(in use)"));
  EXPECT_TRUE(d2.events.empty());
}

}  // namespace
}  // namespace gfp::sm
