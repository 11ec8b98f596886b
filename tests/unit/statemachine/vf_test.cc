// SR-IOV vGPU VFs with Fabric Manager in the state machine (SPEC §9, upstream-behaviour.md §3.3,
// fabric-manager.md §1 row 7): requests by the VFs' GPUs, one VF per GPU, activation with the VF
// list in the partition's GPU order, the same list on every re-activation, and another VM's
// active partition never taken. Hand-worked on the HGX H100 table (sm_fixtures.h): modules
// 1=c3 2=df 3=d1 4=9d 5=43 6=61 7=52 8=1b; partition 1={1,2,3,4}, 3={1,3}, 5={5,7}, 7={1}.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/free_partitions.h"
#include "statemachine/preferred.h"
#include "statemachine/recovery.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::FmError;
using gfp::testing::H100Node;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kVfResource = "nvidia.com/NVIDIA_H100XM-80C";

// VF `fn` (4 or 5) of GPU "0000:c3:00.0" is "0000:c3:00.<fn>".
std::string Vf(const std::string& gpu, int fn) {
  return gpu.substr(0, gpu.size() - 1) + std::to_string(fn);
}

events::Device VfDevice(const std::string& gpu, int fn, int numa) {
  events::Device d;
  d.set_bdf(Vf(gpu, fn));
  d.set_resource(kVfResource);
  d.set_device_id("2330");
  d.set_iommu_group(Vf(gpu, fn));
  d.set_numa_node(numa);
  d.set_kind(events::DEVICE_KIND_VGPU_VF);
  d.set_parent_bdf(gpu);
  return d;
}

// An H100 node in vGPU mode: the GPUs are on `nvidia`, each with VFs .4 and .5; the module
// mapping is the GPUs'.
ObserveInventory VfInventory(const gfp::testing::NodeFixture& node, Micros now) {
  ObserveInventory inventory;
  inventory.now = now;
  for (std::size_t i = 0; i < node.bdfs_by_module.size(); ++i) {
    for (int fn : {4, 5}) {
      inventory.devices.push_back(VfDevice(node.bdfs_by_module[i], fn, node.numa_by_module[i]));
    }
  }
  return inventory;
}

class VfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    d.Boot(node);
    ASSERT_EQ(d.Run(VfInventory(node, d.now)).refusal, "");
  }
  std::string Gpu(int module) { return node.bdfs_by_module[static_cast<std::size_t>(module - 1)]; }
  std::string V(int module, int fn = 4) { return Vf(Gpu(module), fn); }

  // Requests `vfs` and completes it with FM saying yes; returns the allocation id.
  AllocationId Allocate(const std::vector<std::string>& vfs) {
    const Decision first = d.Run(d.Request(kVfResource, vfs));
    EXPECT_EQ(first.refusal, "");
    std::vector<Effect> effects = first.effects;
    while (!effects.empty()) {
      Decision next = d.Run(OutcomeOf(effects.front(), d.now, gfp::testing::FmOk()));
      EXPECT_EQ(next.refusal, "");
      effects.erase(effects.begin());
      effects.insert(effects.end(), next.effects.begin(), next.effects.end());
    }
    return first.allocation_id;
  }

  // FM reports no partition active; the pods' holders are known and hold nothing.
  void FabricLosesEverything(bool pod_holders_known) {
    ObserveFabricState observed;
    observed.now = d.now;
    observed.partitions = gfp::testing::PartitionsOf(node);
    observed.pod_holders_known = pod_holders_known;
    last = d.Run(observed);
  }

  gfp::testing::NodeFixture node = H100Node();
  Driver d;
  Decision last;
};

TEST_F(VfTest, DevicesAreVfsOfTheirGpus) {
  EXPECT_EQ(d.state.devices.at(V(1)).kind, DeviceKind::kVgpuVf);
  EXPECT_EQ(GpuOf(d.state, V(1)), Gpu(1));
  EXPECT_EQ(PartitionWithExactDevices(d.state, {V(3), V(1, 5)}), 3u);
  EXPECT_EQ(PartitionWithExactDevices(d.state, {V(1), V(1, 5)}), std::nullopt);
}

TEST_F(VfTest, TwoVfsOfOneGpuAreRefusedNamingBothAndTheGpu) {
  Decision decision = d.Run(d.Request(kVfResource, {V(1), V(1, 5)}));
  EXPECT_EQ(decision.refusal,
            "VFs 0000:c3:00.4 and 0000:c3:00.5 are on the same GPU 0000:c3:00.0; Fabric Manager "
            "takes one VF per GPU");
  EXPECT_EQ(decision.refusal_kind, RefusalKind::kNotServable);
  EXPECT_TRUE(decision.effects.empty());
}

TEST_F(VfTest, RequestMixingDeviceKindsIsInvalid) {
  ObserveInventory inventory = VfInventory(node, d.now);
  events::Device gpu;  // a whole GPU wrongly served under the same resource
  gpu.set_bdf("0000:e1:00.0");
  gpu.set_resource(kVfResource);
  inventory.devices.push_back(gpu);
  d.Run(inventory);
  Decision decision = d.Run(d.Request(kVfResource, {V(1), "0000:e1:00.0"}));
  EXPECT_EQ(decision.refusal,
            "request mixes device kinds: 0000:c3:00.4 is vgpu-vf, 0000:e1:00.0 is passthrough");
  EXPECT_EQ(decision.refusal_kind, RefusalKind::kInvalidRequest);
}

TEST_F(VfTest, UnmappedGpuIsNamedWithItsVf) {
  ObserveModuleMapping mapping = gfp::testing::MappingOf(node, d.now);
  mapping.assignments.erase(mapping.assignments.begin());  // module 1, 0000:c3:00.0
  ASSERT_EQ(d.Run(mapping).refusal, "");
  EXPECT_EQ(d.Run(d.Request(kVfResource, {V(1)})).refusal,
            "GPU 0000:c3:00.0 of VF 0000:c3:00.4 has no module id in the mapping");
}

TEST_F(VfTest, VfsWhoseGpusFormNoPartitionAreRefusedNamingTheGpus) {
  const std::string refusal = d.Run(d.Request(kVfResource, {V(1), V(2)})).refusal;
  EXPECT_THAT(refusal, HasSubstr("VFs 0000:c3:00.4,0000:df:00.4 on GPUs 0000:c3:00.0,0000:df:00.0 "
                                 "do not form one Fabric Manager partition"));
  EXPECT_THAT(refusal, HasSubstr("3=[0000:c3:00.0,0000:d1:00.0]"));
}

TEST_F(VfTest, ActivationPassesOneVfPerGpuInThePartitionsGpuOrder) {
  // kubelet's order is d1 then c3; partition 3 lists module 1 (c3) first.
  const std::size_t mark = d.journal.size();
  Decision first = d.Run(d.Request(kVfResource, {V(3, 5), V(1)}));
  ASSERT_EQ(first.refusal, "");
  ASSERT_EQ(first.effects.size(), 1u);
  EXPECT_EQ(first.effects[0].partition_id, 3u);
  EXPECT_THAT(first.effects[0].vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  const auto& requested = d.journal.back().partition_activation_requested();
  EXPECT_THAT(requested.vf_bdfs(), ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_THAT(d.state.intents.at(3).vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_THAT(d.state.allocations.at(first.allocation_id).fabric_vfs,
              ElementsAre("0000:c3:00.4", "0000:d1:00.5"));

  d.Run(OutcomeOf(first.effects[0], d.now, gfp::testing::FmOk()));
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("AllocationRequested", "PartitionActivationRequested",
                                              "PartitionActivated", "AllocationGranted"));
  EXPECT_THAT(d.journal[d.journal.size() - 2].partition_activated().vf_bdfs(),
              ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_THAT(d.state.active.at(3).vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_EQ(d.state.active.at(3).owner, first.allocation_id);
}

TEST_F(VfTest, FourGpuActivationFollowsFabricManagersOrderNotPciOrNorKubelets) {
  // Partition 1 = modules 1,2,3,4 = c3, df, d1, 9d.
  Decision first = d.Run(d.Request(kVfResource, {V(4), V(3, 5), V(2), V(1, 5)}));
  ASSERT_EQ(first.effects.size(), 1u);
  EXPECT_EQ(first.effects[0].partition_id, 1u);
  EXPECT_THAT(first.effects[0].vf_bdfs,
              ElementsAre("0000:c3:00.5", "0000:df:00.4", "0000:d1:00.5", "0000:9d:00.4"));
}

TEST(VfWholeGpuTest, WholeGpuActivationsKeepEmptyLists) {
  Driver d;
  auto node = H100Node();
  d.Boot(node);
  Decision first = d.Run(d.Request(node.resource, gfp::testing::Modules(node, {1, 3})));
  ASSERT_EQ(first.effects.size(), 1u);
  EXPECT_TRUE(first.effects[0].vf_bdfs.empty());
  EXPECT_EQ(d.journal.back().partition_activation_requested().vf_bdfs_size(), 0);
  d.Run(OutcomeOf(first.effects[0], d.now, gfp::testing::FmOk()));
  EXPECT_TRUE(d.state.active.at(3).vf_bdfs.empty());
  EXPECT_TRUE(d.state.allocations.at(first.allocation_id).fabric_vfs.empty());
}

TEST_F(VfTest, DriftRepairReactivatesWithTheJournaledList) {
  const AllocationId id = Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/false);
  ASSERT_EQ(last.effects.size(), 1u);
  EXPECT_EQ(last.effects[0].kind, Effect::Kind::kActivatePartition);
  EXPECT_THAT(last.effects[0].vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_THAT(d.journal.back().partition_activation_requested().vf_bdfs(),
              ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  d.Run(OutcomeOf(last.effects[0], d.now, gfp::testing::FmOk()));
  EXPECT_EQ(d.state.active.at(3).owner, id);
  EXPECT_THAT(d.state.active.at(3).vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
}

TEST_F(VfTest, PreStartReactivatesWithTheJournaledList) {
  const AllocationId id = Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/true);  // nobody seen: no repair, only drift
  ASSERT_TRUE(last.effects.empty());
  ASSERT_FALSE(d.state.active.count(3));
  Decision ensure = d.Run(EnsurePartitionActive{d.now, {V(1), V(3, 5)}});
  EXPECT_EQ(ensure.refusal, "");
  ASSERT_EQ(ensure.effects.size(), 1u);
  EXPECT_THAT(ensure.effects[0].vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  d.Run(OutcomeOf(ensure.effects[0], d.now, gfp::testing::FmOk()));
  EXPECT_EQ(d.state.active.at(3).owner, id);
}

// docs/recovery.md row 7 with VFs: a re-activation whose outcome was lost is recorded with its
// journaled list, and the partition goes back to its owner.
TEST_F(VfTest, InterruptedReactivationIsRecordedWithItsListForItsOwner) {
  const AllocationId id = Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/true);
  Decision ensure = d.Run(EnsurePartitionActive{d.now, {V(1), V(3, 5)}});
  ASSERT_EQ(ensure.effects.size(), 1u);
  for (const auto& outcome : ResolvePendingIntents(d.state, {3}, d.now)) d.Run(outcome);
  EXPECT_THAT(d.journal.back().partition_activated().vf_bdfs(),
              ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_EQ(d.state.active.at(3).owner, id);
  EXPECT_EQ(d.state.anomaly_count, 0u);
}

// Found by the deterministic simulation (GFP_SIM_SEED=20029, an H100 vGPU node): a drift repair
// with VFs whose reply was lost (the retry after reconnecting got FM_ST_IN_USE) took effect in FM,
// and the next observation adopted the partition without an owner although the running VM's
// granted allocation names it. It goes back to that allocation, with the allocation's VF list
// (every activation for it passes that list): as for whole GPUs (recovery.md row 15).
TEST_F(VfTest, RepairWithVfsThatTookEffectUnansweredGoesBackToItsAllocationWithItsList) {
  const AllocationId id = Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/false);
  ASSERT_EQ(last.effects.size(), 1u);
  d.Run(OutcomeOf(last.effects[0], d.now, gfp::testing::FmError(-7, "FM_ST_IN_USE")));
  ASSERT_FALSE(d.state.active.count(3));
  ObserveFabricState late;  // FM had carried the first attempt out
  late.now = ++d.now;
  late.partitions = gfp::testing::PartitionsOf(node, {3});
  d.Run(late);
  ASSERT_TRUE(d.state.active.count(3));
  EXPECT_EQ(d.state.active.at(3).owner, id);
  EXPECT_FALSE(d.state.active.at(3).adopted);
  EXPECT_THAT(d.state.active.at(3).vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.5"));
  EXPECT_EQ(d.state.anomaly_count, 0u);
}

// The journal's order can only stop matching FM's GPU order through a hand-made state (the table
// and mapping of a partition in use never change): re-activation is then refused, never done
// with a different list.
TEST_F(VfTest, ReactivationIsRefusedWhenTheGpuOrderNoLongerMatchesTheJournaledList) {
  Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/true);
  d.state.partitions.mutable_value().at(3).physical_ids = {3, 1};
  Decision ensure = d.Run(EnsurePartitionActive{d.now, {V(1), V(3, 5)}});
  EXPECT_TRUE(ensure.effects.empty());
  EXPECT_EQ(ensure.refusal,
            "partition 3 cannot be re-activated for allocation alloc-1 with its VFs "
            "[0000:c3:00.4,0000:d1:00.5]: they no longer follow the partition's GPU order "
            "[0000:d1:00.0,0000:c3:00.0], and Fabric Manager needs the same VF order on every "
            "activation");
  ObserveFabricState observed;  // drift repair, FM's table agreeing with the changed order
  observed.now = d.now;
  observed.partitions = gfp::testing::PartitionsOf(node);
  for (auto& p : observed.partitions) {
    if (p.id() == 3) {
      p.clear_physical_ids();
      p.add_physical_ids(3);
      p.add_physical_ids(1);
    }
  }
  Decision repair = d.Run(observed);
  EXPECT_TRUE(repair.effects.empty());
  EXPECT_THAT(repair.refusal, HasSubstr("cannot be re-activated for allocation alloc-1"));
}

// A granted VF allocation without a journaled list (no journal of this version holds one) whose
// VFs no longer give one per GPU is not re-activated, and never for whole GPUs.
TEST_F(VfTest, ReactivationWithoutAListNeverActivatesForWholeGpus) {
  const AllocationId id = Allocate({V(3, 5), V(1)});
  FabricLosesEverything(/*pod_holders_known=*/true);
  d.state.allocations.at(id).fabric_vfs.clear();
  d.state.devices.mutable_value().at(V(3, 5)).parent_bdf = Gpu(1);
  Decision ensure = d.Run(EnsurePartitionActive{d.now, {V(1), V(3, 5)}});
  EXPECT_TRUE(ensure.effects.empty());
  EXPECT_EQ(ensure.refusal,
            "partition 3 cannot be re-activated for allocation alloc-1: its VFs "
            "0000:d1:00.5,0000:c3:00.4 are not one per GPU of the partition");
}

TEST_F(VfTest, SameVfsAgainAreGrantedWithoutFabricManager) {
  const AllocationId old_id = Allocate({V(1), V(3)});
  const std::size_t mark = d.journal.size();
  Decision again = d.Run(d.Request(kVfResource, {V(3), V(1)}));
  EXPECT_EQ(again.refusal, "");
  EXPECT_TRUE(again.effects.empty());
  EXPECT_THAT(d.TypesSince(mark),
              ElementsAre("AllocationRequested", "AllocationReleased", "AllocationGranted"));
  EXPECT_FALSE(d.state.allocations.count(old_id));
  EXPECT_THAT(d.state.allocations.at(again.allocation_id).fabric_vfs,
              ElementsAre("0000:c3:00.4", "0000:d1:00.4"));
  EXPECT_EQ(d.state.active.at(3).owner, again.allocation_id);
}

TEST_F(VfTest, InterruptedActivationIsClaimedByTheRetryWithItsList) {
  Decision first = d.Run(d.Request(kVfResource, {V(1), V(3)}));
  RecordFabricManagerOutcome outcome{d.now, IntentKind::kActivate, 3, gfp::testing::FmOk()};
  outcome.interrupted = true;
  d.Run(outcome);
  ASSERT_TRUE(d.state.allocations.empty());
  ASSERT_EQ(d.state.active.at(3).owner, "");
  Decision retry = d.Run(d.Request(kVfResource, {V(1), V(3)}));
  EXPECT_TRUE(retry.effects.empty());
  EXPECT_THAT(d.state.allocations.at(retry.allocation_id).fabric_vfs,
              ElementsAre("0000:c3:00.4", "0000:d1:00.4"));
}

TEST_F(VfTest, PartitionActiveForAnotherLiveVmWithOtherVfsIsRefused) {
  const AllocationId x = Allocate({V(1), V(3)});
  Decision y = d.Run(d.Request(kVfResource, {V(1, 5), V(3, 5)}));
  EXPECT_EQ(y.refusal,
            "partition 3 is active for allocation " + x + " with VFs [0000:c3:00.4,0000:d1:00.4]");
  EXPECT_EQ(y.refusal_kind, RefusalKind::kNotServable);
  EXPECT_TRUE(y.effects.empty());
  EXPECT_EQ(d.state.active.at(3).owner, x);
  // A smaller partition inside it is refused too: x's partition is never deactivated for it.
  Decision z = d.Run(d.Request(kVfResource, {V(1, 5)}));
  EXPECT_EQ(z.refusal,
            "partition 3 is active for allocation " + x + " with VFs [0000:c3:00.4,0000:d1:00.4]");
  EXPECT_TRUE(z.effects.empty());
  EXPECT_EQ(d.state.allocations.at(x).status, AllocationStatus::kGranted);
}

TEST_F(VfTest, OrphanedPartitionWithOtherVfsIsDeactivatedThenActivatedWithTheNewList) {
  const AllocationId x = Allocate({V(1), V(3)});
  ReleaseAllocation release;
  release.now = d.now;
  release.allocation_id = x;
  Decision released = d.Run(release);
  ASSERT_EQ(released.effects.size(), 1u);
  d.Run(OutcomeOf(released.effects[0], d.now, FmError(-2, "FM_ST_GENERIC_ERROR")));
  ASSERT_EQ(d.state.active.at(3).owner, "");  // orphaned, still active with x's VFs

  const std::size_t mark = d.journal.size();
  std::vector<Effect> effects;
  auto outcome = [&](const Effect& e) {
    effects.push_back(e);
    return gfp::testing::FmOk();
  };
  EXPECT_EQ(d.RunToCompletion(d.Request(kVfResource, {V(3, 5), V(1, 5)}), outcome), "");
  EXPECT_THAT(
      d.TypesSince(mark),
      ElementsAre("AllocationRequested", "PartitionDeactivationRequested", "PartitionDeactivated",
                  "PartitionActivationRequested", "PartitionActivated", "AllocationGranted"));
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0].kind, Effect::Kind::kDeactivatePartition);
  EXPECT_THAT(effects[1].vf_bdfs, ElementsAre("0000:c3:00.5", "0000:d1:00.5"));
  EXPECT_THAT(d.state.active.at(3).vf_bdfs, ElementsAre("0000:c3:00.5", "0000:d1:00.5"));
}

TEST_F(VfTest, AdoptedPartitionIsActivatedAgainWithTheVfs) {
  ObserveFabricState observed;
  observed.now = d.now;
  observed.partitions = gfp::testing::PartitionsOf(node, {3});
  d.Run(observed);
  ASSERT_TRUE(d.state.active.at(3).adopted);
  std::vector<Effect> effects;
  EXPECT_EQ(d.RunToCompletion(d.Request(kVfResource, {V(1), V(3)}),
                              [&](const Effect& e) {
                                effects.push_back(e);
                                return gfp::testing::FmOk();
                              }),
            "");
  ASSERT_EQ(effects.size(), 2u);
  EXPECT_EQ(effects[0].kind, Effect::Kind::kDeactivatePartition);
  EXPECT_THAT(effects[1].vf_bdfs, ElementsAre("0000:c3:00.4", "0000:d1:00.4"));
}

// Preferred allocation: the whole-GPU policy picks partition 5 (modules 5,7 = 43, 52: breaks 2
// larger partitions like every 2-GPU one, NUMA node 0 before node 1, lowest id); one VF per GPU in
// partition order, the lowest available BDF unless one is must-include.
TEST_F(VfTest, PreferredOffersOneVfPerGpuOfOnePartitionInItsGpuOrder) {
  PreferredRequest request;
  for (auto it = d.state.devices.value().rbegin(); it != d.state.devices.value().rend(); ++it) {
    request.available.push_back(it->first);  // kubelet's order: highest BDF first
  }
  request.size = 2;
  auto answer = PreferredAllocation(d.state, request);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_THAT(*answer, ElementsAre("0000:43:00.4", "0000:52:00.4"));

  request.must_include = {V(7, 5)};
  answer = PreferredAllocation(d.state, request);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_THAT(*answer, ElementsAre("0000:43:00.4", "0000:52:00.5"));

  // GPU 43 (module 5) has no available VF: partition 6 (modules 6,8 = 61, 1b) instead.
  std::erase_if(request.available, [](const std::string& id) { return id.starts_with("0000:43"); });
  request.must_include.clear();
  answer = PreferredAllocation(d.state, request);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_THAT(*answer, ElementsAre("0000:61:00.4", "0000:1b:00.4"));
}

TEST_F(VfTest, PreferredRefusesTwoMustIncludeVfsOnOneGpu) {
  PreferredRequest request;
  for (const auto& [id, device] : d.state.devices) request.available.push_back(id);
  request.must_include = {V(1), V(1, 5)};
  request.size = 2;
  auto answer = PreferredAllocation(d.state, request);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message(),
            "no Fabric Manager partition of 2 GPUs can be formed: must-include VFs 0000:c3:00.4 "
            "and 0000:c3:00.5 are on the same GPU 0000:c3:00.0; Fabric Manager takes one VF per "
            "GPU");
}

TEST_F(VfTest, PreferredFourGpusFollowsPartitionOrder) {
  PreferredRequest request;
  for (const auto& [id, device] : d.state.devices) request.available.push_back(id);
  request.must_include = {V(3, 5)};
  request.size = 4;
  auto answer = PreferredAllocation(d.state, request);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  // Partition 1 (modules 1-4) holds module 3; order c3, df, d1, 9d.
  EXPECT_THAT(*answer, ElementsAre("0000:c3:00.4", "0000:df:00.4", "0000:d1:00.5", "0000:9d:00.4"));
}

using Counts = std::map<std::size_t, std::size_t>;

TEST_F(VfTest, FreePartitionsCountGpusThroughTheirVfs) {
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 8}, {2, 4}, {4, 2}, {8, 1}}));
  Allocate({V(1, 5)});  // GPU c3 (module 1) is used through one VF; its other VF is free
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 7}, {2, 3}, {4, 1}, {8, 0}}));
  // One unhealthy VF of GPU 52 (module 7) leaves the other; both unhealthy take the GPU away.
  d.Run(ObserveDeviceHealth{d.now, V(7), false, "gone"});
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 7}, {2, 3}, {4, 1}, {8, 0}}));
  d.Run(ObserveDeviceHealth{d.now, V(7, 5), false, "gone"});
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 6}, {2, 2}, {4, 0}, {8, 0}}));
  EXPECT_EQ(LargestFreePartition(FreePartitionsBySize(d.state)), 2u);
}

TEST_F(VfTest, InvariantsCatchBadVfLists) {
  const AllocationId x = Allocate({V(1), V(3)});
  ASSERT_TRUE(CheckInvariants(d.state).ok());
  {
    State s = d.state;
    s.active.at(3).vf_bdfs = {V(1)};  // one VF for two GPUs
    s.allocations.at(x).fabric_vfs = {V(1)};
    EXPECT_THAT(CheckInvariants(s).message(), HasSubstr("1 VFs for 2 GPUs"));
  }
  {
    State s = d.state;
    s.active.at(3).vf_bdfs = {V(3), V(1)};  // reversed: not in the partition's GPU order
    s.allocations.at(x).fabric_vfs = {V(3), V(1)};
    EXPECT_THAT(CheckInvariants(s).message(), HasSubstr("VF 0000:d1:00.4 in place 0"));
  }
  {
    State s = d.state;
    s.allocations.at(x).fabric_vfs = {V(1), V(3, 5)};
    EXPECT_THAT(CheckInvariants(s).message(), HasSubstr("not a permutation of its devices"));
  }
  {
    State s = d.state;  // activated for whole GPUs while its owner holds VFs: two kinds
    s.active.at(3).vf_bdfs.clear();
    EXPECT_THAT(CheckInvariants(s).message(),
                HasSubstr("partition 3 is active with VFs [], its owner alloc-1 has"));
  }
}

TEST(VfWholeGpuTest, InvariantsCatchAVfListForWholeGpus) {
  Driver d;
  auto node = H100Node();
  d.Boot(node);
  const auto gpus = gfp::testing::Modules(node, {1, 3});
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, gpus)), "");
  State s = d.state;
  s.active.at(3).vf_bdfs = gpus;
  s.allocations.begin()->second.fabric_vfs = gpus;
  EXPECT_THAT(CheckInvariants(s).message(), HasSubstr("with VFs for whole GPUs of allocation"));
}

TEST_F(VfTest, WithoutFabricManagerVfsArePreferredByNuma) {
  Driver plain;
  plain.Boot(node, /*fm=*/false);
  plain.Run(VfInventory(node, plain.now));
  PreferredRequest request;
  request.available = {V(1), V(5), V(6)};  // NUMA 1, 0, 0
  request.size = 2;
  auto answer = PreferredAllocation(plain.state, request);
  ASSERT_TRUE(answer.ok());
  EXPECT_THAT(*answer, ElementsAre(V(5), V(6)));
  EXPECT_EQ(plain.RunToCompletion(plain.Request(kVfResource, {V(1), V(1, 5)})), "");
}

}  // namespace
}  // namespace gfp::sm
