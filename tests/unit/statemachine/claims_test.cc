// DRA claims in the pure core (SPEC §11): prepare through the partition saga, the files step,
// repeated prepares that repair and never activate twice, unprepare, refusals, and the rules that
// keep a claim's GPUs from anyone else.
#include "statemachine/claims.h"

#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/release_tracker.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::FmError;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ClaimsTest : public ::testing::Test {
 protected:
  void SetUp() override { d.Boot(node); }

  PrepareClaim Claim(const std::string& uid, const std::string& name,
                     const std::vector<std::string>& gpus) {
    d.now += 1000;
    PrepareClaim c;
    c.now = d.now;
    c.claim.set_uid(uid);
    c.claim.set_namespace_("vms");
    c.claim.set_name(name);
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto& device = c.devices.emplace_back();
      device.set_request("gpu" + std::to_string(i));
      device.set_bdf(gpus[i]);
    }
    c.reserved_for = {"vms/virt-launcher-" + name};
    c.pod_claim_name = "gpus";
    return c;
  }
  UnprepareClaim Unprepare(const std::string& uid) {
    d.now += 1000;
    return UnprepareClaim{d.now, uid, events::ClaimUnprepareRequested::REASON_KUBELET, ""};
  }
  // Prepares `c` to the end: saga, then its files.
  void Prepare(const PrepareClaim& c) {
    ASSERT_EQ(d.RunToCompletion(c), "");
    ASSERT_EQ(ClaimProgressOf(d.state, c.claim.uid()), ClaimProgress::kWriteFiles);
    ASSERT_EQ(d.Run(RecordClaimFiles{d.now, c.claim.uid()}).refusal, "");
  }
  ClaimProgress Progress(const std::string& uid) const { return ClaimProgressOf(d.state, uid); }
  const events::Event& Last() const { return d.journal.back(); }

  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

TEST_F(ClaimsTest, APrepareRunsTheSagaThenWaitsForItsFiles) {
  const std::size_t mark = d.journal.size();
  const PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  ASSERT_EQ(d.RunToCompletion(c), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("ClaimPrepareRequested", "PartitionActivationRequested",
                          "PartitionActivated", "AllocationGranted"));
  const auto& requested = d.journal[mark].claim_prepare_requested();
  EXPECT_EQ(requested.claim().namespace_() + "/" + requested.claim().name(), "vms/vm-a");
  EXPECT_TRUE(requested.has_partition());
  EXPECT_EQ(requested.partition_id(), 1u);
  EXPECT_THAT(requested.reserved_for(), ElementsAre("vms/virt-launcher-vm-a"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);

  const Decision files = d.Run(RecordClaimFiles{d.now, "uid-1"});
  EXPECT_EQ(files.refusal, "");
  EXPECT_THAT(d.TypesSince(mark + 4), ElementsAre("ClaimPrepared"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kPrepared);
  const Allocation* a = ClaimAllocation(d.state, "uid-1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(d.state.active.at(1).owner, a->id);
  EXPECT_THAT(a->claim->requests, ElementsAre("gpu0", "gpu1", "gpu2", "gpu3"));
  EXPECT_EQ(a->claim->pod_claim_name, "gpus");
}

TEST_F(ClaimsTest, WithoutFabricManagerAClaimIsGrantedWithoutAPartition) {
  Driver plain;
  plain.Boot(node, /*fm=*/false);
  d = plain;
  const std::size_t mark = d.journal.size();
  ASSERT_EQ(d.RunToCompletion(Claim("uid-1", "vm-a", Modules(node, {1, 5}))), "");
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimPrepareRequested", "AllocationGranted"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);
  EXPECT_FALSE(ClaimAllocation(d.state, "uid-1")->partition);
}

TEST_F(ClaimsTest, ARepeatedPrepareOfAPreparedClaimJournalsNothingAndCallsNoOne) {
  const PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  Prepare(c);
  const std::size_t mark = d.journal.size();
  const Decision again = d.Run(c);
  EXPECT_EQ(again.refusal, "");
  EXPECT_THAT(again.effects, IsEmpty());
  EXPECT_EQ(d.journal.size(), mark);
  EXPECT_EQ(again.allocation_id, ClaimAllocation(d.state, "uid-1")->id);
}

TEST_F(ClaimsTest, LostFilesAreRepairedJournalFirstWithoutAnFmCall) {
  PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  Prepare(c);
  const std::size_t mark = d.journal.size();
  c.files_present = false;
  const Decision repair = d.Run(c);
  EXPECT_THAT(repair.effects, IsEmpty());
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimPrepareRequested"));
  EXPECT_TRUE(Last().claim_prepare_requested().repair());
  EXPECT_THAT(Last().claim_prepare_requested().repair_reason(), HasSubstr("files are missing"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);
  ASSERT_EQ(d.Run(RecordClaimFiles{d.now, "uid-1"}).refusal, "");
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kPrepared);
}

TEST_F(ClaimsTest, ALostPartitionIsReactivatedByTheRepeatedPrepareOnce) {
  const PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  Prepare(c);
  events::Event lost;
  lost.set_time_unix_micros(d.now);
  lost.mutable_drift_detected()->set_partition_id(1);
  lost.mutable_drift_detected()->set_kind(events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY);
  d.Commit({lost});
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kPreparing);

  const std::size_t mark = d.journal.size();
  ASSERT_EQ(d.RunToCompletion(c), "");
  EXPECT_THAT(
      d.TypesSince(mark),
      ElementsAre("ClaimPrepareRequested", "PartitionActivationRequested", "PartitionActivated"));
  EXPECT_EQ(d.state.active.at(1).owner, ClaimAllocation(d.state, "uid-1")->id);
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);
  ASSERT_EQ(d.Run(RecordClaimFiles{d.now, "uid-1"}).refusal, "");
  const std::size_t after = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(c), "");
  EXPECT_EQ(d.journal.size(), after) << "a third prepare must not activate again";
}

// kubelet repeats Prepare while the repair's activation is still in flight: refused until it
// lands, with no second repair journaled and no second activation.
TEST_F(ClaimsTest, ARepairIsJournaledOnceWhilePreparesRepeat) {
  PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  Prepare(c);
  events::Event lost;
  lost.set_time_unix_micros(d.now);
  lost.mutable_drift_detected()->set_partition_id(1);
  lost.mutable_drift_detected()->set_kind(events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY);
  d.Commit({lost});
  c.claim.set_name("spelled-otherwise");  // the journal keeps the name it was prepared under
  const Decision first = d.Run(c);
  ASSERT_EQ(first.effects.size(), 1u);
  EXPECT_EQ(d.journal[d.journal.size() - 2].claim_prepare_requested().claim().name(), "vm-a");
  const std::size_t mark = d.journal.size();
  const Decision again = d.Run(c);
  EXPECT_THAT(again.refusal, HasSubstr("has a pending activate"));
  EXPECT_THAT(again.effects, IsEmpty());
  EXPECT_EQ(d.journal.size(), mark);
  d.Run(OutcomeOf(first.effects[0], ++d.now, {}));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);
}

TEST_F(ClaimsTest, AClaimCountsAsHeldWhenFabricManagerLosesItsPartition) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  ObserveFabricState f;
  f.now = d.now;
  f.partitions = gfp::testing::PartitionsOf(node, {});
  f.pod_holders_known = true;  // PodResources knows no pod with these GPUs: claims use CDI
  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(f), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("DriftDetected", "PartitionActivationRequested", "PartitionActivated"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kPrepared);
}

TEST_F(ClaimsTest, DevicesThatFormNoPartitionFailTheClaimWithoutAnFmCall) {
  const std::size_t mark = d.journal.size();
  const Decision refused = d.Run(Claim("uid-1", "vm-a", Modules(node, {1, 5})));
  EXPECT_THAT(refused.refusal, HasSubstr("claim vms/vm-a: devices"));
  EXPECT_THAT(refused.refusal, HasSubstr("do not form one Fabric Manager partition"));
  EXPECT_EQ(refused.refusal_kind, RefusalKind::kNotServable);
  EXPECT_THAT(refused.effects, IsEmpty());
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimPrepareRequested", "ClaimPrepareFailed"));
  EXPECT_TRUE(d.state.allocations.empty());
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kUnknown);
}

TEST_F(ClaimsTest, MalformedClaimsAreRefusedNamingTheField) {
  struct Case {
    std::string name;
    std::function<void(PrepareClaim&)> spoil;
    std::string expected;
  };
  const std::string gpu = Modules(node, {1}).front();
  const std::vector<Case> cases = {
      {"uid with a slash", [](PrepareClaim& c) { c.claim.set_uid("../etc"); },
       "uid has a character"},
      {"empty uid", [](PrepareClaim& c) { c.claim.set_uid(""); }, "uid is empty"},
      {"namespace", [](PrepareClaim& c) { c.claim.set_namespace_("Bad_NS"); }, "namespace has"},
      {"name", [](PrepareClaim& c) { c.claim.set_name(std::string(300, 'a')); },
       "name is longer than 253"},
      {"request", [](PrepareClaim& c) { c.devices[0].set_request("GPU 0"); }, "request name"},
      {"unknown GPU", [](PrepareClaim& c) { c.devices[0].set_bdf("0000:ee:00.0"); },
       "unknown GPU 0000:ee:00.0"},
      {"twice", [gpu](PrepareClaim& c) { c.devices.push_back(c.devices[0]); },
       "names GPU " + gpu + " twice"},
      {"no devices", [](PrepareClaim& c) { c.devices.clear(); }, "has no device of this node"},
      {"consumer", [](PrepareClaim& c) { c.reserved_for = {"no-slash"}; }, "is not namespace/name"},
      {"pod claim name", [](PrepareClaim& c) { c.pod_claim_name = "a.b"; }, "pod claim name"},
  };
  for (const auto& test : cases) {
    SCOPED_TRACE(test.name);
    PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1}));
    test.spoil(c);
    const std::size_t mark = d.journal.size();
    const Decision refused = d.Run(c);
    EXPECT_THAT(refused.refusal, HasSubstr(test.expected));
    EXPECT_EQ(refused.refusal_kind, RefusalKind::kInvalidRequest);
    EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimPrepareRequested", "ClaimPrepareFailed"));
    EXPECT_TRUE(d.state.allocations.empty());
  }
}

TEST_F(ClaimsTest, AHugeRefusedClaimKeepsTheJournalSmall) {
  PrepareClaim c = Claim(std::string(100'000, 'u'), "vm-a", {});
  for (int i = 0; i < 5000; ++i) {
    auto& device = c.devices.emplace_back();
    device.set_request(std::string(1000, 'r'));
    device.set_bdf(std::string(1000, '\n'));
  }
  const Decision refused = d.Run(c);
  EXPECT_THAT(refused.refusal, HasSubstr("uid is longer than 64"));
  const auto& journaled = d.journal[d.journal.size() - 2].claim_prepare_requested();
  EXPECT_EQ(journaled.devices_size(), 8);
  EXPECT_EQ(journaled.devices_omitted(), 4992u);
  EXPECT_LT(d.journal[d.journal.size() - 2].ByteSizeLong(), 4096u);
  EXPECT_EQ(journaled.devices(0).bdf().find('\n'), std::string::npos);
}

TEST_F(ClaimsTest, AnUnhealthyGpuIsNotServable) {
  const std::string gpu = Modules(node, {2}).front();
  d.Run(ObserveDeviceHealth{d.now, gpu, false, "XID 79"});
  const Decision refused = d.Run(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  EXPECT_THAT(refused.refusal, HasSubstr("GPU " + gpu + " is unhealthy: XID 79"));
  EXPECT_EQ(refused.refusal_kind, RefusalKind::kNotServable);
}

TEST_F(ClaimsTest, NoOtherClaimOrKubeletAllocationTakesAClaimsGpus) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  const Decision other = d.Run(Claim("uid-2", "vm-b", Modules(node, {1, 3})));
  EXPECT_THAT(other.refusal, HasSubstr("is held by claim vms/vm-a (uid uid-1)"));
  const Decision kubelet = d.Run(d.Request(node.resource, Modules(node, {1, 3})));
  EXPECT_THAT(kubelet.refusal, HasSubstr("is prepared for DRA claim vms/vm-a (uid uid-1)"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kPrepared);
  EXPECT_TRUE(d.state.active.count(1));
}

TEST_F(ClaimsTest, APreparedClaimWithOtherDevicesIsRefusedWithoutAJournal) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  const std::size_t mark = d.journal.size();
  const Decision other = d.Run(Claim("uid-1", "vm-a", Modules(node, {5, 6, 7, 8})));
  EXPECT_THAT(other.refusal, HasSubstr("is prepared with GPUs"));
  EXPECT_EQ(d.journal.size(), mark);
}

TEST_F(ClaimsTest, UnprepareDeactivatesThenWaitsForTheFilesRemoval) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(Unprepare("uid-1")), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("ClaimUnprepareRequested", "PartitionDeactivationRequested",
                          "PartitionDeactivated"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kRemoveFiles);
  EXPECT_TRUE(d.state.allocations.empty());
  EXPECT_EQ(d.Run(RecordClaimFilesRemoved{d.now, "uid-1"}).refusal, "");
  EXPECT_EQ(Last().body_case(), events::Event::kClaimUnprepared);
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kUnknown);
  EXPECT_TRUE(d.state.unpreparing_claims.empty());
  EXPECT_TRUE(d.state.active.empty());
}

TEST_F(ClaimsTest, UnprepareOfAnUnknownClaimAnswersAtOnce) {
  const std::size_t mark = d.journal.size();
  const Decision unknown = d.Run(Unprepare("never-seen"));
  EXPECT_EQ(unknown.refusal, "");
  EXPECT_THAT(unknown.effects, IsEmpty());
  EXPECT_EQ(d.Run(RecordClaimFilesRemoved{d.now, "never-seen"}).refusal, "");
  EXPECT_EQ(d.journal.size(), mark);
}

TEST_F(ClaimsTest, AnUnprepareFabricManagerRefusesIsRetriedByTheNextUnprepare) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  const std::string refused = d.RunToCompletion(
      Unprepare("uid-1"), [](const Effect&) { return FmError(-9, "FM_ST_CONNECTION_NOT_VALID"); });
  EXPECT_THAT(refused, HasSubstr("FM_ST_CONNECTION_NOT_VALID"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kDeactivating);
  EXPECT_THAT(d.Run(RecordClaimFilesRemoved{d.now, "uid-1"}).refusal,
              HasSubstr("not waiting for its files' removal"));
  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(Unprepare("uid-1")), "");
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("PartitionDeactivationRequested", "PartitionDeactivated"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kRemoveFiles);
}

TEST_F(ClaimsTest, APartitionTakenOverByANewClaimIsNeverDeactivatedByTheOldOnesUnprepare) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  d.RunToCompletion(Unprepare("uid-1"),
                    [](const Effect&) { return FmError(-9, "FM_ST_CONNECTION_NOT_VALID"); });
  const std::size_t mark = d.journal.size();
  Prepare(Claim("uid-2", "vm-b", Modules(node, {1, 2, 3, 4})));
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("ClaimPrepareRequested", "AllocationGranted", "ClaimPrepared"))
      << "the active ownerless partition is taken over without an FM call";
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kRemoveFiles);
  const std::size_t before = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(Unprepare("uid-1")), "");
  EXPECT_EQ(d.journal.size(), before);
  EXPECT_EQ(d.Run(RecordClaimFilesRemoved{d.now, "uid-1"}).refusal, "");
  EXPECT_EQ(d.state.active.at(1).owner, ClaimAllocation(d.state, "uid-2")->id);
}

TEST_F(ClaimsTest, AnInterruptedPrepareFailsAndItsRetryTakesThePartitionWithoutAnFmCall) {
  const PrepareClaim c = Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4}));
  const Decision started = d.Run(c);
  ASSERT_EQ(started.effects.size(), 1u);
  RecordFabricManagerOutcome interrupted;
  interrupted.now = d.now;
  interrupted.kind = IntentKind::kActivate;
  interrupted.partition_id = started.effects[0].partition_id;
  interrupted.interrupted = true;
  const Decision failed = d.Run(interrupted);
  EXPECT_EQ(failed.refusal_kind, RefusalKind::kInterrupted);
  EXPECT_EQ(Last().body_case(), events::Event::kClaimPrepareFailed);
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kUnknown);
  ASSERT_TRUE(d.state.active.count(1));

  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(c), "");
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimPrepareRequested", "AllocationGranted"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kWriteFiles);
}

// A prepare journaled with no transition pending and no caller left (its process stopped):
// start-up's AbandonInterruptedRequests fails it as it rejects a kubelet allocation.
TEST_F(ClaimsTest, AnAbandonedPrepareFailsTheClaim) {
  events::Event requested;
  requested.set_time_unix_micros(d.now);
  auto* prepare = requested.mutable_claim_prepare_requested();
  prepare->set_allocation_id(AllocationIdFor(d.state.next_allocation_number));
  prepare->mutable_claim()->set_uid("uid-1");
  auto* device = prepare->add_devices();
  device->set_request("gpu0");
  device->set_bdf(Modules(node, {1}).front());
  d.Commit({requested});
  ASSERT_EQ(Progress("uid-1"), ClaimProgress::kPreparing);
  const Decision abandoned = d.Run(AbandonInterruptedRequests{d.now});
  EXPECT_EQ(Last().body_case(), events::Event::kClaimPrepareFailed);
  EXPECT_THAT(Last().claim_prepare_failed().reason(), HasSubstr("interrupted"));
  EXPECT_EQ(Progress("uid-1"), ClaimProgress::kUnknown);
}

TEST_F(ClaimsTest, ReleasesByPodResourcesNeverEndAClaim) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  const AllocationId id = ClaimAllocation(d.state, "uid-1")->id;
  ReleaseTracker tracker;
  const auto due = tracker.Observe(d.state, {}, d.now + 3'600'000'000);
  EXPECT_THAT(due.allocations, IsEmpty());
  EXPECT_THAT(due.newly_absent, IsEmpty());
  ReleaseAllocation release;
  release.now = d.now;
  release.allocation_id = id;
  EXPECT_THAT(d.Run(release).refusal, HasSubstr("which ends by its unprepare"));
  const std::size_t mark = d.journal.size();
  PodContainerDevices pod{"vms", "virt-launcher-vm-a", "compute", node.resource,
                          Modules(node, {1, 2, 3, 4})};
  d.Run(ObservePodResources{d.now, {pod}});
  EXPECT_EQ(d.journal.size(), mark) << "a claim is never bound through PodResources";
}

TEST_F(ClaimsTest, TheSliceIsJournaledOncePerChange) {
  const ResourceSliceState slice{"node-a-gpu-fabric-plugin.io-x7k2p", 1, 8, "ab12"};
  d.Run(RecordResourceSlicePublished{d.now, slice});
  d.Run(RecordResourceSlicePublished{d.now, slice});
  ResourceSliceState next = slice;
  next.generation = 2;
  next.device_count = 7;
  d.Run(RecordResourceSlicePublished{d.now, next});
  std::size_t published = 0;
  for (const auto& e : d.journal) published += e.has_resource_slice_published();
  EXPECT_EQ(published, 2u);
  EXPECT_EQ(d.state.resource_slice, next);
}

TEST_F(ClaimsTest, ReplayingTheJournalRebuildsTheClaims) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  Prepare(Claim("uid-2", "vm-b", Modules(node, {5, 7})));
  d.RunToCompletion(Unprepare("uid-2"),
                    [](const Effect&) { return FmError(-9, "FM_ST_CONNECTION_NOT_VALID"); });
  State replayed;
  for (std::size_t i = 0; i < d.journal.size(); ++i) Apply(replayed, i + 1, d.journal[i]);
  EXPECT_TRUE(replayed == d.state);
  EXPECT_EQ(replayed.unpreparing_claims.count("uid-2"), 1u);
  EXPECT_EQ(replayed.anomaly_count, 0u);
}

TEST_F(ClaimsTest, ClaimEventsOutOfPlaceAreAnomalies) {
  auto commit = [&](auto mutate) {
    events::Event e;
    e.set_time_unix_micros(d.now);
    mutate(e);
    d.Commit({e});
  };
  commit([](events::Event& e) {
    e.mutable_claim_prepared()->set_allocation_id("alloc-77");
    e.mutable_claim_prepared()->set_claim_uid("u");
  });
  commit([](events::Event& e) {
    e.mutable_claim_unprepared()->set_allocation_id("alloc-77");
    e.mutable_claim_unprepared()->set_claim_uid("u");
  });
  EXPECT_EQ(d.state.anomaly_count, 2u);
  EXPECT_THAT(d.state.recent_anomalies.back().description,
              HasSubstr("whose unprepare was not requested"));
}

TEST_F(ClaimsTest, InvariantsCatchAClaimHeldTwice) {
  Prepare(Claim("uid-1", "vm-a", Modules(node, {1, 2, 3, 4})));
  State broken = d.state;
  broken.unpreparing_claims["uid-1"].claim.uid = "uid-1";
  EXPECT_THAT(CheckInvariants(broken).message(), HasSubstr("is live and being unprepared"));
  broken = d.state;
  broken.allocations.begin()->second.claim->requests.pop_back();
  EXPECT_THAT(CheckInvariants(broken).message(), HasSubstr("request names for 4 devices"));
}

}  // namespace
}  // namespace gfp::sm
