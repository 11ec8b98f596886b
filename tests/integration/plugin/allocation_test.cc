// GetPreferredAllocation, Allocate, PreStartContainer and release with Fabric Manager
// (kubelet.md §5 items 5-7, SPEC §4.3-4.6), through the real serve binary and the simulated FM.
#include <algorithm>
#include <set>

#include "integration/plugin/reconcile_passes.h"
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

std::set<std::string> AsSet(const google::protobuf::RepeatedPtrField<std::string>& ids) {
  return {ids.begin(), ids.end()};
}
std::set<std::string> AsSet(const std::vector<std::string>& ids) {
  return {ids.begin(), ids.end()};
}

class AllocationTest : public ServeFixture {
 protected:
  // For every size of the preset's table: the answer is exactly the GPUs of one partition of that
  // size; sizes in between have no partition and get an error naming the size.
  void ExpectPreferredIsOnePartitionForEverySize() {
    const auto sizes = PartitionSizes();
    ASSERT_FALSE(sizes.empty());
    const auto all = node_.GpuBdfs();
    for (std::size_t size = 1; size <= all.size(); ++size) {
      SCOPED_TRACE("allocation size " + std::to_string(size));
      auto answer = Preferred(all, {}, static_cast<int>(size));
      if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) {
        ASSERT_FALSE(answer.ok()) << "no partition has " << size << " GPUs, yet an answer came";
        EXPECT_NE(answer.status.error_message().find("no partition has " + std::to_string(size) +
                                                     " GPUs"),
                  std::string::npos)
            << Describe(answer.status);
        continue;
      }
      ASSERT_TRUE(answer.ok()) << Describe(answer.status);
      ASSERT_EQ(answer.response.container_responses_size(), 1);
      const auto chosen = AsSet(answer.response.container_responses(0).deviceids());
      EXPECT_EQ(chosen.size(), size);
      bool is_partition = false;
      for (auto pid : PartitionsOfSize(size)) is_partition |= AsSet(PartitionBdfs(pid)) == chosen;
      EXPECT_TRUE(is_partition) << "the answer is not one partition's GPUs";

      // With a must-include GPU, the answer is a partition containing it, must-include first.
      const std::string must = all[size % all.size()];
      auto with_must = Preferred(all, {must}, static_cast<int>(size));
      ASSERT_TRUE(with_must.ok()) << Describe(with_must.status);
      const auto& ids = with_must.response.container_responses(0).deviceids();
      ASSERT_EQ(static_cast<std::size_t>(ids.size()), size);
      EXPECT_EQ(ids[0], must);
      bool contains = false;
      for (auto pid : PartitionsOfSize(size)) {
        const auto gpus = AsSet(PartitionBdfs(pid));
        contains |= gpus == AsSet(ids) && gpus.count(must);
      }
      EXPECT_TRUE(contains) << "the must-include answer is not a partition holding " << must;
    }
    // Nothing was activated by asking.
    EXPECT_TRUE(ActivePartitions().empty());
  }
};

TEST_F(AllocationTest, PreferredAllocationH100EverySize) {
  Prepare({});
  StartServe();
  ExpectPreferredIsOnePartitionForEverySize();
}

TEST_F(AllocationTest, PreferredAllocationB200EverySize) {
  ServeSetup setup;
  setup.preset = sim::NodePreset::kHgxB200;
  Prepare(setup);
  StartServe();
  ExpectPreferredIsOnePartitionForEverySize();
}

TEST_F(AllocationTest, PreferredAllocationA100x16EverySize) {
  ServeSetup setup;
  setup.preset = sim::NodePreset::kHgxA100x16;
  Prepare(setup);
  StartServe();
  ExpectPreferredIsOnePartitionForEverySize();
}

TEST_F(AllocationTest, PreferredAllocationRespectsAvailability) {
  Prepare({});
  StartServe();
  // Partition 1 (modules 1-4) is in use: a 4-GPU request must get partition 2 (modules 5-8).
  std::vector<std::string> available;
  const auto taken = AsSet(PartitionBdfs(1));
  for (const auto& bdf : node_.GpuBdfs()) {
    if (!taken.count(bdf)) available.push_back(bdf);
  }
  auto answer = Preferred(available, {}, 4);
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  EXPECT_EQ(AsSet(answer.response.container_responses(0).deviceids()), AsSet(PartitionBdfs(2)));
  // 8 GPUs cannot be formed from 4 available: the error names the size and the partition.
  auto none = Preferred(available, {}, 8);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status.error_message().find("partition of 8 GPUs"), std::string::npos)
      << Describe(none.status);
  EXPECT_NE(none.status.error_message().find("partition 0"), std::string::npos)
      << Describe(none.status);
}

TEST_F(AllocationTest, AllocateAlignedActivatesThePartition) {
  Prepare({});
  StartServe();
  // Partition 1: modules 1-4. Ask in an order that is neither PCI nor module order.
  std::vector<std::string> request = PartitionBdfs(1);
  std::rotate(request.begin(), request.begin() + 1, request.end());
  std::swap(request[0], request[2]);
  auto allocated = Allocate({request});
  ASSERT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{1});

  ASSERT_EQ(allocated.response.container_responses_size(), 1);
  const auto& c = allocated.response.container_responses(0);
  std::string joined;
  for (const auto& id : request) joined += (joined.empty() ? "" : ",") + id;
  ASSERT_EQ(c.envs().size(), 1u);
  EXPECT_EQ(c.envs().at(env_key_), joined) << "env must list the BDFs in request order";

  std::set<std::string> paths;
  for (const auto& d : c.devices()) {
    EXPECT_EQ(d.host_path(), d.container_path());
    EXPECT_EQ(d.permissions(), "mrw");
    EXPECT_TRUE(paths.insert(d.container_path()).second) << "duplicate " << d.container_path();
  }
  std::set<std::string> expected = {"/dev/vfio/vfio"};
  for (const auto& bdf : request) expected.insert("/dev/vfio/" + GroupOf(bdf));
  EXPECT_EQ(paths, expected) << "no iommufd on this node: no /dev/iommu, no vfio cdevs";

  // Idempotent: the same IDs again (init-container reuse) succeed without another FM call.
  const int activations = FmCalls("fmActivateFabricPartition");
  auto again = Allocate({request});
  EXPECT_TRUE(again.ok()) << Describe(again.status);
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), activations);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{1});

  auto types = HistoryTypes();
  for (const char* t : {"AllocationRequested", "PartitionActivationRequested", "PartitionActivated",
                        "AllocationGranted"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  }
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, AllocateWithIommufdHandsOutCdevsAndDevIommu) {
  ServeSetup setup;
  setup.with_iommufd = true;
  Prepare(setup);
  StartServe();
  const auto request = PartitionBdfs(3);  // modules 1 and 3
  auto allocated = Allocate({request});
  ASSERT_TRUE(allocated.ok()) << Describe(allocated.status);
  std::set<std::string> paths;
  for (const auto& d : allocated.response.container_responses(0).devices()) {
    EXPECT_EQ(d.permissions(), "mrw");
    EXPECT_EQ(d.host_path(), d.container_path());
    paths.insert(d.container_path());
  }
  std::set<std::string> expected = {"/dev/vfio/vfio", "/dev/iommu"};
  for (const auto& bdf : request) {
    expected.insert("/dev/vfio/" + GroupOf(bdf));
    expected.insert("/dev/vfio/devices/" + node_.FindGpu(bdf)->vfio_device);
  }
  EXPECT_EQ(paths, expected);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{3});
}

TEST_F(AllocationTest, AllocateMisalignedIsRefusedAndActivatesNothing) {
  Prepare({});
  StartServe();
  // Modules 1 and 2 are not a partition (the 2-GPU ones are {1,3} {2,4} {5,7} {6,8}).
  std::vector<std::string> request;
  for (const auto& gpu : node_.gpus) {
    if (gpu.module_id == 1 || gpu.module_id == 2) request.push_back(gpu.bdf);
  }
  ASSERT_EQ(request.size(), 2u);
  auto refused = Allocate({request});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status.error_message().find("do not form one Fabric Manager partition"),
            std::string::npos)
      << Describe(refused.status);
  EXPECT_TRUE(ActivePartitions().empty());
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 0);
  auto types = HistoryTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), "AllocationRejected"), types.end());
  EXPECT_TRUE(serve_->Running());
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, StaleOverlappingPartitionsAreDeactivatedFirst) {
  ServeSetup setup;
  // Long grace and interval: the stale partitions are still active when Allocate comes.
  setup.release_grace = "10m";
  setup.reconcile_interval = "10m";
  Prepare(setup);
  // Left active by someone else before we started (e.g. a previous node owner): {1,3} and {2,4}.
  ASSERT_TRUE(fm_->ActivateDirectly(3).ok());
  ASSERT_TRUE(fm_->ActivateDirectly(4).ok());
  ASSERT_TRUE(fm_->ActivateDirectly(6).ok());  // {6,8}: does not overlap, stays
  ASSERT_TRUE(fm_->ClearCallLog().ok());
  StartServe();
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{3, 4, 6}));

  auto allocated = Allocate({PartitionBdfs(1)});  // modules 1-4
  ASSERT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 6}));
  // Order in FM: both stale ones deactivated before the new one was activated.
  std::vector<std::string> partition_calls;
  for (const auto& call : FmCallSequence()) {
    if (call.rfind("fmActivateFabricPartition", 0) == 0 ||
        call.rfind("fmDeactivateFabricPartition", 0) == 0) {
      partition_calls.push_back(call);
    }
  }
  ASSERT_EQ(partition_calls.size(), 3u) << ::testing::PrintToString(partition_calls);
  EXPECT_EQ(partition_calls[0].rfind("fmDeactivateFabricPartition", 0), 0u);
  EXPECT_EQ(partition_calls[1].rfind("fmDeactivateFabricPartition", 0), 0u);
  EXPECT_EQ(partition_calls[2].rfind("fmActivateFabricPartition", 0), 0u);
  for (const auto& call : partition_calls) EXPECT_EQ(call.back(), '0') << call;

  // The journal has intent and outcome for each step.
  int deactivated = 0;
  for (const auto& e : History()) {
    if (e.value("type", "") == "PartitionDeactivated") ++deactivated;
  }
  EXPECT_EQ(deactivated, 2);
  ExpectJournalVerifies();
}

// FM changed behind our back after start, before any reconcile noticed: the activation gets
// FM_ST_IN_USE, the plugin refreshes FM's state (adopting the stranger) and retries once.
TEST_F(AllocationTest, PartitionActivatedBehindOurBackAfterStartIsClearedOnRetry) {
  ServeSetup setup;
  setup.release_grace = "10m";
  setup.reconcile_interval = "10m";
  Prepare(setup);
  StartServe();
  ASSERT_TRUE(fm_->ActivateDirectly(3).ok());     // modules 1,3
  auto allocated = Allocate({PartitionBdfs(1)});  // modules 1-4
  ASSERT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1}));
  int rejected = 0, adopted = 0;
  for (const auto& e : History()) {
    rejected += e.value("type", "") == "AllocationRejected";
    adopted += e.value("type", "") == "DriftDetected";
  }
  EXPECT_EQ(rejected, 1);  // the first attempt, with FM_ST_IN_USE
  EXPECT_EQ(adopted, 1);
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, KubeletReallocatingDevicesEndsTheOlderAllocation) {
  ServeSetup setup;
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe();
  ASSERT_TRUE(Allocate({PartitionBdfs(3)}).ok());  // modules 1,3
  ASSERT_TRUE(Allocate({PartitionBdfs(5)}).ok());  // modules 5,7
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{3, 5}));
  // The kubelet hands modules 1-4 out again: partition 3 is stale, partition 5 is untouched.
  auto allocated = Allocate({PartitionBdfs(1)});
  ASSERT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 5}));
  bool released = false;
  for (const auto& e : History()) {
    released |= e.value("type", "") == "AllocationReleased";
  }
  EXPECT_TRUE(released);
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, PreStartReactivatesAPartitionLostBehindOurBack) {
  ServeSetup setup;
  // Only PreStart may repair: no reconciliation pass during the test, no release.
  setup.reconcile_interval = "10m";
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe();
  const auto devices = PartitionBdfs(2);  // modules 5-8
  ASSERT_TRUE(Allocate({devices}).ok());
  ASSERT_EQ(ActivePartitions(), std::vector<std::uint32_t>{2});

  auto first = PreStart(devices);
  EXPECT_TRUE(first.ok()) << Describe(first.status);
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 1) << "already active: no FM activation";

  ASSERT_TRUE(fm_->DeactivateDirectly(2).ok());
  ASSERT_TRUE(ActivePartitions().empty());
  const auto started = std::chrono::steady_clock::now();
  auto repaired = PreStart(devices);
  EXPECT_TRUE(repaired.ok()) << Describe(repaired.status);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s)
      << "PreStart must stay well under 30 s";
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{2});
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 2);

  // Idempotent: again, nothing to do.
  auto again = PreStart(devices);
  EXPECT_TRUE(again.ok()) << Describe(again.status);
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 2);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{2});

  auto types = HistoryTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), "DriftDetected"), types.end());
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, PreStartForDevicesWithoutAllocationIsRefused) {
  ServeSetup setup;
  setup.reconcile_interval = "10m";
  Prepare(setup);
  StartServe();
  auto refused = PreStart(PartitionBdfs(1));
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status.error_message().find("no granted allocation"), std::string::npos)
      << Describe(refused.status);
  EXPECT_TRUE(ActivePartitions().empty());
}

TEST_F(AllocationTest, DeletedPodIsReleasedAfterTheGrace) {
  Prepare({.release_grace = kShortReleaseGrace});  // reconcile 100ms, grace 300ms
  StartServe();
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  const auto held = admitted.response.containers[0].device_ids;
  ASSERT_EQ(ActivePartitions().size(), 1u);
  const std::uint32_t pid = ActivePartitions()[0];
  EXPECT_EQ(AsSet(PartitionBdfs(pid)), AsSet(held));

  // Held by a pod: bound, and not released however long it runs.
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound", [](const auto& e) { return e.dump().find("vm-a") != std::string::npos; },
      10s))
      << "the pod holding the devices was not journaled as AllocationBound";
  // Over two graces of reconcile passes (7 passes 100 ms apart): a held allocation survives them.
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 7));
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{pid});

  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-a"));
  EXPECT_TRUE(WaitUntil([&] { return ActivePartitions().empty(); }, 10s))
      << "partition " << pid << " was not deactivated after the pod was deleted";

  // Journal: AllocationBound, then AllocationReleased, then the deactivation.
  ASSERT_TRUE(WaitForEvent(
      "PartitionDeactivated", [](const auto&) { return true; }, 10s));
  std::vector<std::string> order;
  for (const auto& t : HistoryTypes()) {
    if (t == "AllocationBound" || t == "AllocationReleased" || t == "PartitionDeactivated") {
      order.push_back(t);
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"AllocationBound", "AllocationReleased",
                                             "PartitionDeactivated"}));
  const auto state = State();
  EXPECT_TRUE(state["active_partitions"].empty()) << state.dump(2);
  EXPECT_TRUE(state["live_allocations"].empty()) << state.dump(2);
  ExpectJournalVerifies();
}

TEST_F(AllocationTest, PodResourcesErrorsReleaseNothing) {
  Prepare({.release_grace = kShortReleaseGrace});  // reconcile 100ms, grace 300ms
  StartServe();
  auto admitted = kubelet_->AdmitPod("vms", "vm-b", {{"compute", 4}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  ASSERT_EQ(ActivePartitions().size(), 1u);
  // The next 12 List calls fail (~1.2 s, four graces); the pod goes away meanwhile.
  auto& pod_resources = kubelet_->pod_resources();
  pod_resources.FailNextList(grpc::StatusCode::UNAVAILABLE, "kubelet busy", 12);
  const int calls = pod_resources.list_calls();
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-b"));
  ASSERT_TRUE(WaitUntil([&] { return pod_resources.list_calls() >= calls + 12; }, 15s))
      << "serve stopped listing PodResources";
  EXPECT_EQ(ActivePartitions().size(), 1u) << "released on failed List calls";
  // Once List works again, the release follows after the grace.
  EXPECT_TRUE(WaitUntil([&] { return ActivePartitions().empty(); }, 10s))
      << "not released once PodResources answered again";
  ExpectJournalVerifies();
}

}  // namespace
}  // namespace gfp::testing
