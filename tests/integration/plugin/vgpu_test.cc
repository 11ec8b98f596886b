// Every device kind the Go plugin serves, through the real serve binary (SPEC §9): mdev vGPUs
// (upstream-behaviour.md §1.4, §1.10, §1.11), SR-IOV vGPU VFs with Fabric Manager in
// FABRIC_MODE=2 (§3.2, §3.3) and Grace EGM (§1.9).
#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "integration/plugin/metrics_http.h"
#include "integration/plugin/serve_fixture.h"
#include "sim/fm/sim_tables.h"

namespace gfp::testing {
namespace {

std::vector<std::string> SpecPaths(const v1beta1::ContainerAllocateResponse& response) {
  std::vector<std::string> paths;
  for (const auto& d : response.devices()) {
    EXPECT_EQ(d.host_path(), d.container_path());
    EXPECT_EQ(d.permissions(), "mrw");
    paths.push_back(d.host_path());
  }
  return paths;
}

// The devices of the node's InventoryObserved, as JSON objects.
std::vector<nlohmann::json> InventoryDevices(const std::vector<nlohmann::json>& history) {
  for (auto it = history.rbegin(); it != history.rend(); ++it) {
    if (it->value("type", "") != "InventoryObserved") continue;
    if (!it->contains("devices")) return {};
    return {(*it)["devices"].begin(), (*it)["devices"].end()};
  }
  return {};
}

// The label lines of the NFD file (its comment lines dropped).
std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::string text;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') text += line + "\n";
  }
  return text;
}

class VgpuTest : public ServeFixture {
 protected:
  // The metrics port serve logged; 0 when it did not.
  int MetricsPort() {
    static const std::regex listening(R"(metrics endpoint listening on 127\.0\.0\.1:(\d+))");
    int port = 0;
    WaitUntil(
        [&] {
          std::smatch m;
          const std::string log = serve_ ? serve_->Log() : "";
          if (std::regex_search(log, m, listening)) port = std::stoi(m[1]);
          return port != 0;
        },
        20s);
    return port;
  }
  // The NFD file's text when the GPUs in `held` are taken (computed from the table).
  std::string ExpectedLabels(const std::set<std::string>& held) const {
    std::string text;
    std::size_t largest = 0;
    for (std::size_t size : PartitionSizes()) {
      std::size_t free = 0;
      for (std::uint32_t id : PartitionsOfSize(size)) {
        const auto bdfs = PartitionBdfs(id);
        free +=
            std::none_of(bdfs.begin(), bdfs.end(), [&](const auto& b) { return held.count(b); });
      }
      text +=
          "gpu-fabric.free-partitions." + std::to_string(size) + "=" + std::to_string(free) + "\n";
      if (free > 0) largest = std::max(largest, size);
    }
    return text + "gpu-fabric.largest-free-partition=" + std::to_string(largest) + "\n";
  }

  // The mdevs of one type, by UUID.
  std::vector<sim::FakeMdev> MdevsOfType(const std::string& type_name) const {
    std::vector<sim::FakeMdev> out;
    for (const auto& m : node_.mdevs) {
      if (m.type_name == type_name) out.push_back(m);
    }
    return out;
  }
  // The node's configured VFs (a vGPU type set), by BDF.
  std::vector<sim::FakeVf> ConfiguredVfs() const {
    std::vector<sim::FakeVf> out;
    for (const auto& vf : node_.vfs) {
      if (vf.vgpu_type_id != "0") out.push_back(vf);
    }
    return out;
  }
  // The VFs Fabric Manager must get for partition `pid`: one per GPU, in FM's physical-id order
  // (computed from the table, not from the plugin).
  std::vector<std::string> FmOrderVfs(std::uint32_t pid) const {
    auto table = fmsim::FindTable(fm_table_);
    EXPECT_TRUE(table.ok());
    std::vector<std::string> out;
    for (std::uint32_t module : (*table)->Find(pid)->physical_ids) {
      for (const auto& gpu : node_.gpus) {
        if (gpu.module_id == module) out.push_back(VfOn(gpu.bdf));
      }
    }
    return out;
  }
  std::vector<fmsim::VfActivation> VfActivations() const {
    auto calls = fm_->VfActivations();
    EXPECT_TRUE(calls.ok()) << calls.status().message();
    return calls.ok() ? *calls : std::vector<fmsim::VfActivation>{};
  }
  // The vf_bdfs of every PartitionActivationRequested in the journal.
  std::vector<std::vector<std::string>> JournaledVfLists() {
    std::vector<std::vector<std::string>> out;
    for (const auto& e : History()) {
      if (e.value("type", "") != "PartitionActivationRequested") continue;
      out.push_back(e.value("vf_bdfs", std::vector<std::string>{}));
    }
    return out;
  }
  std::string VfOn(const std::string& gpu) const {
    for (const auto& vf : ConfiguredVfs()) {
      if (vf.parent_bdf == gpu) return vf.bdf;
    }
    ADD_FAILURE() << "no configured VF on " << gpu;
    return "";
  }
};

// --- mdev ----------------------------------------------------------------------------------------

TEST_F(VgpuTest, MdevTypesAreResourcesOfUuidsWithTheParentsNuma) {  // upstream §1.4, §1.11
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kMdevA100});
  StartServe();
  for (const std::string type : {"GRID A100-4C", "GRID A100-8C"}) {
    const std::string suffix = type == "GRID A100-4C" ? "GRID_A100-4C" : "GRID_A100-8C";
    SCOPED_TRACE(type);
    ASSERT_TRUE(WaitUntil(
        [&] {
          auto r = kubelet_->Resource("nvidia.com/" + suffix);
          return r && r->connected && !r->devices.empty();
        },
        10s));
    const auto snapshot = kubelet_->Resource("nvidia.com/" + suffix);
    ASSERT_TRUE(snapshot.has_value());
    EXPECT_EQ(snapshot->endpoint, "kubevirt-" + suffix + ".sock");
    // The Go vGPU plugin advertises neither (upstream-behaviour.md §1.11).
    EXPECT_FALSE(snapshot->options.get_preferred_allocation_available());
    EXPECT_FALSE(snapshot->options.pre_start_required());
    const auto expected = MdevsOfType(type);
    ASSERT_EQ(snapshot->devices.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const auto& d = snapshot->devices[i];
      EXPECT_EQ(d.id(), expected[i].uuid);
      ASSERT_EQ(d.topology().nodes_size(), 1);
      EXPECT_EQ(d.topology().nodes(0).id(), node_.FindGpu(expected[i].parent_bdf)->numa_node);
    }
  }
  // Journaled with kind and parent.
  const auto devices = InventoryDevices(History());
  ASSERT_EQ(devices.size(), node_.mdevs.size());
  for (const auto& d : devices) {
    EXPECT_EQ(d.value("kind", ""), "DEVICE_KIND_MDEV") << d.dump();
    EXPECT_FALSE(d.value("parent_bdf", "").empty()) << d.dump();
  }
}

// Each container gets /dev/vfio/vfio and its mdevs' group nodes, never the /dev/vfio directory
// the Go plugin hands out (issue 21: a runtime expands it to every VM's group node).
TEST_F(VgpuTest, MdevAllocateGivesUuidsAndTheirGroupNodesWithoutFabricManager) {  // §1.10
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kMdevA100});
  StartServe();
  const auto mdevs = MdevsOfType("GRID A100-4C");
  ASSERT_GE(mdevs.size(), 3u);
  auto answer = Allocate({{mdevs[2].uuid, mdevs[0].uuid}, {mdevs[1].uuid}});
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  ASSERT_EQ(answer.response.container_responses_size(), 2);
  const auto& first = answer.response.container_responses(0);
  EXPECT_EQ(first.envs().at("MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C"),
            mdevs[2].uuid + "," + mdevs[0].uuid);
  EXPECT_EQ(first.envs_size(), 1);
  EXPECT_EQ(SpecPaths(first),
            (std::vector<std::string>{"/dev/vfio/vfio", "/dev/vfio/" + mdevs[2].iommu_group,
                                      "/dev/vfio/" + mdevs[0].iommu_group}));
  const auto& second = answer.response.container_responses(1);
  EXPECT_EQ(second.envs().at(env_key_), mdevs[1].uuid);
  EXPECT_EQ(SpecPaths(second),
            (std::vector<std::string>{"/dev/vfio/vfio", "/dev/vfio/" + mdevs[1].iommu_group}));
  // Fabric Manager is on, but an mdev is never in a partition.
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 0);
  EXPECT_EQ(FmCalls("fmActivateFabricPartitionWithVFs"), 0);
  EXPECT_TRUE(ActivePartitions().empty());
  // And PreStart (kubelet would not call it) has nothing to verify.
  auto prestart = PreStart({mdevs[2].uuid, mdevs[0].uuid});
  EXPECT_TRUE(prestart.ok()) << Describe(prestart.status);
}

// sysfs is not watched: the periodic re-check (every 10 s) finds the change.
TEST_F(VgpuTest, MdevOrItsParentDisappearingMakesItUnhealthy) {  // SPEC §9
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kMdevA100});
  StartServe();
  const auto mdevs = MdevsOfType("GRID A100-4C");
  ASSERT_GE(mdevs.size(), 6u);
  ASSERT_NE(mdevs[0].parent_bdf, mdevs[3].parent_bdf);
  ASSERT_TRUE(node_.RemoveMdev(mdevs[0].uuid).ok());
  // The parent GPU of another goes: every mdev on it goes Unhealthy.
  const std::string parent = mdevs[3].parent_bdf;
  ASSERT_TRUE(node_.RemoveDevice(parent).ok());
  auto unhealthy = [&](const std::vector<v1beta1::Device>& d) {
    if (HealthOf(d, mdevs[0].uuid) != "Unhealthy") return false;
    for (const auto& m : mdevs) {
      if (m.parent_bdf == parent && HealthOf(d, m.uuid) != "Unhealthy") return false;
    }
    return true;
  };
  EXPECT_TRUE(WaitForDevices(unhealthy, 25s))
      << "a removed mdev, or the mdevs of removed GPU " << parent << ", stayed Healthy";
  EXPECT_EQ(HealthOf(kubelet_->Resource(resource_)->devices, mdevs[5].uuid), "Healthy");
  // Allocating one is refused with the reason.
  auto refused = Allocate({{mdevs[0].uuid}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status.error_message().find("mdev " + mdevs[0].uuid + " is gone"),
            std::string::npos)
      << Describe(refused.status);
}

// An mdev whose group node is gone from /dev (its health re-check looks at sysfs only) fails the
// Allocate with the reason, naming the mdev; nothing is granted for the other container.
TEST_F(VgpuTest, MdevWhoseGroupNodeIsMissingFailsTheAllocateNamingIt) {
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kMdevA100});
  StartServe();
  const auto mdevs = MdevsOfType("GRID A100-4C");
  ASSERT_GE(mdevs.size(), 2u);
  ASSERT_TRUE(node_.RemoveVfioGroupNode(mdevs[1].iommu_group).ok());
  auto refused = Allocate({{mdevs[0].uuid}, {mdevs[1].uuid}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(refused.status.error_message(),
            "mdev " + mdevs[1].uuid + ": VFIO group node " +
                (node_.dev_root / "vfio" / mdevs[1].iommu_group).string() + " is missing");
  for (const auto& e : History()) EXPECT_NE(e.value("type", ""), "AllocationGranted") << e.dump();
}

TEST_F(VgpuTest, MdevAllocationIsReleasedWhenItsPodGoes) {
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kMdevA100, .release_grace = kShortReleaseGrace});
  StartServe();
  auto admitted = kubelet_->AdmitPod("vms", "vgpu-vm", {{"compute", 1}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound",
      [](const auto& e) { return e.dump().find("vgpu-vm") != std::string::npos; }, 10s));
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vgpu-vm"));
  EXPECT_TRUE(WaitForEvent(
      "AllocationReleased", [](const auto&) { return true; }, 10s))
      << "the mdev allocation was not released";
  EXPECT_EQ(FmCalls("fmDeactivateFabricPartition"), 0);
  ExpectJournalVerifies();
}

// --- Grace EGM -----------------------------------------------------------------------------------

TEST_F(VgpuTest, GraceEgmNodeComesWithItsCompleteGpuSet) {  // upstream-behaviour.md §1.9
  ServeSetup setup;
  setup.vgpu_preset = sim::VgpuNodePreset::kGraceGh200;
  setup.fabric_manager = false;
  Prepare(setup);
  StartServe();
  ASSERT_EQ(node_.egms.size(), 4u);
  const std::string gpu0 = node_.egms[0].gpu_bdfs[0];
  const std::string gpu1 = node_.egms[1].gpu_bdfs[0];
  auto answer = Allocate({{gpu1, gpu0}});
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  const auto& response = answer.response.container_responses(0);
  EXPECT_EQ(response.envs().at(env_key_), gpu1 + "," + gpu0);
  const auto paths = SpecPaths(response);
  // The VFIO nodes, then the EGM nodes sorted by path.
  ASSERT_GE(paths.size(), 2u);
  EXPECT_EQ(std::vector<std::string>(paths.end() - 2, paths.end()),
            (std::vector<std::string>{"/dev/egm0", "/dev/egm1"}));
  EXPECT_EQ(std::count(paths.begin(), paths.end(), "/dev/vfio/vfio"), 1);

  // An EGM whose /dev node is gone at Allocate time is not handed out.
  std::filesystem::remove(node_.dev_root / "egm2");
  auto without = Allocate({{node_.egms[2].gpu_bdfs[0]}});
  ASSERT_TRUE(without.ok()) << Describe(without.status);
  for (const auto& p : SpecPaths(without.response.container_responses(0))) {
    EXPECT_EQ(p.rfind("/dev/egm", 0), std::string::npos) << p;
  }
}

// --- SR-IOV vGPU VFs -----------------------------------------------------------------------------

TEST_F(VgpuTest, VfProfileIsAResourceOfVfBdfsWithoutFabricManager) {  // upstream §3.2
  ServeSetup setup;
  setup.vgpu_preset = sim::VgpuNodePreset::kVfH100;
  setup.fabric_manager = false;
  Prepare(setup);
  StartServe();
  const auto snapshot = kubelet_->Resource(resource_);
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->endpoint, "kubevirt-NVIDIA_H100XM-80C.sock");
  EXPECT_TRUE(snapshot->options.get_preferred_allocation_available());
  const auto vfs = ConfiguredVfs();
  ASSERT_EQ(snapshot->devices.size(), vfs.size());
  for (std::size_t i = 0; i < vfs.size(); ++i) EXPECT_EQ(snapshot->devices[i].id(), vfs[i].bdf);

  auto answer = Allocate({{vfs[1].bdf, vfs[0].bdf}});
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  const auto& response = answer.response.container_responses(0);
  EXPECT_EQ(response.envs().at("PCI_RESOURCE_NVIDIA_COM_NVIDIA_H100XM-80C"),
            vfs[1].bdf + "," + vfs[0].bdf);
  EXPECT_EQ(SpecPaths(response),
            (std::vector<std::string>{"/dev/vfio/vfio", "/dev/vfio/" + vfs[1].iommu_group,
                                      "/dev/vfio/" + vfs[0].iommu_group}));
  EXPECT_EQ(FmCalls("fmActivateFabricPartitionWithVFs"), 0);

  // A VF whose vGPU type is cleared goes Unhealthy.
  ASSERT_TRUE(node_.SetVfVgpuType(vfs[2].bdf, "0").ok());
  EXPECT_TRUE(
      WaitForDevices([&](const auto& d) { return HealthOf(d, vfs[2].bdf) == "Unhealthy"; }, 25s));
  const auto devices = InventoryDevices(History());
  ASSERT_FALSE(devices.empty());
  EXPECT_EQ(devices[0].value("kind", ""), "DEVICE_KIND_VGPU_VF");
  EXPECT_EQ(devices[0].value("parent_bdf", ""), vfs[0].parent_bdf);
}

TEST_F(VgpuTest, VfsWithFabricManagerActivateOneVfPerGpuInPartitionOrder) {  // §3.3
  // No release: the allocation's VFs are in no pod, and the journal reads between Allocate and
  // PreStart took longer than a 300 ms grace in CI's ASan run (PreStart then found nothing).
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kVfH100, .release_grace = "10m"});
  // A second configured VF on the first GPU: two VFs of one GPU must never go to FM together.
  const std::string first_gpu = node_.gpus[0].bdf;
  const std::string second_vf = node_.vfs[1].bdf;
  ASSERT_EQ(node_.vfs[1].parent_bdf, first_gpu);
  ASSERT_TRUE(node_.SetVfVgpuType(second_vf, node_.vfs[0].vgpu_type_id).ok());
  node_.vfs[1].vgpu_type_id = node_.vfs[0].vgpu_type_id;
  StartServe();
  std::vector<std::string> all;
  for (const auto& vf : ConfiguredVfs()) all.push_back(vf.bdf);

  // Preferred: one VF per GPU of a free 2-GPU partition.
  auto preferred = Preferred(all, {}, 2);
  ASSERT_TRUE(preferred.ok()) << Describe(preferred.status);
  const auto& chosen = preferred.response.container_responses(0).deviceids();
  ASSERT_EQ(chosen.size(), 2);
  std::set<std::string> parents;
  for (const auto& id : chosen) {
    for (const auto& vf : node_.vfs) {
      if (vf.bdf == id) parents.insert(vf.parent_bdf);
    }
  }
  bool one_partition = false;
  for (auto pid : PartitionsOfSize(2)) {
    const auto gpus = PartitionBdfs(pid);
    one_partition |= parents == std::set<std::string>(gpus.begin(), gpus.end());
  }
  EXPECT_TRUE(one_partition) << "the preferred VFs are not on the GPUs of one 2-GPU partition";

  // Two VFs of one GPU: refused before FM is asked.
  auto same_gpu = Allocate({{node_.vfs[0].bdf, second_vf}});
  ASSERT_FALSE(same_gpu.ok());
  EXPECT_EQ(same_gpu.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << Describe(same_gpu.status);
  EXPECT_NE(same_gpu.status.error_message().find("same GPU"), std::string::npos)
      << Describe(same_gpu.status);
  EXPECT_TRUE(VfActivations().empty());

  // Allocate in reverse order: FM gets the partition's order, kubelet's env the request's.
  const std::uint32_t pid = PartitionsOfSize(2)[0];
  const auto gpus = PartitionBdfs(pid);
  const std::vector<std::string> request = {VfOn(gpus[1]), VfOn(gpus[0])};
  auto answer = Allocate({request});
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  EXPECT_EQ(answer.response.container_responses(0).envs().at(env_key_),
            request[0] + "," + request[1]);
  const auto expected = FmOrderVfs(pid);
  ASSERT_EQ(VfActivations().size(), 1u);
  EXPECT_EQ(VfActivations()[0], (fmsim::VfActivation{pid, expected, 0, ""}));
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), 0);
  EXPECT_EQ(JournaledVfLists(), std::vector<std::vector<std::string>>{expected});

  // FM loses the partition; PreStart re-activates with the same list.
  ASSERT_TRUE(fm_->DeactivateDirectly(pid).ok());
  auto prestart = PreStart(request);
  ASSERT_TRUE(prestart.ok()) << Describe(prestart.status);
  ASSERT_EQ(VfActivations().size(), 2u);
  EXPECT_EQ(VfActivations()[1], (fmsim::VfActivation{pid, expected, 0, ""}));
  for (const auto& list : JournaledVfLists()) EXPECT_EQ(list, expected);
  ExpectJournalVerifies();
}

TEST_F(VgpuTest, VfPartitionSurvivesFmLossAndIsReleasedWithItsPod) {
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kVfH100, .release_grace = kShortReleaseGrace});
  StartServe();
  auto admitted = kubelet_->AdmitPod("vms", "vgpu-vm", {{"compute", 4}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  auto active = fm_->ActiveVfs();
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 1u);
  // Named copies, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto pid = active->begin()->first;
  const auto vfs = active->begin()->second;
  EXPECT_EQ(vfs, FmOrderVfs(pid));
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound",
      [](const auto& e) { return e.dump().find("vgpu-vm") != std::string::npos; }, 10s));

  // Drift: FM lost it while the pod holds it; the reconciler re-activates with the same VFs.
  ASSERT_TRUE(fm_->DeactivateDirectly(pid).ok());
  EXPECT_TRUE(WaitUntil([&] { return VfActivations().size() >= 2; }, 10s))
      << "the lost partition was not re-activated";
  EXPECT_EQ(VfActivations().back(), (fmsim::VfActivation{pid, vfs, 0, ""}));

  // FM restarts in resiliency mode: the resync keeps the partition with its VFs.
  ASSERT_TRUE(fm_->Restart(true).ok());
  EXPECT_TRUE(WaitUntil([&] { return FmCalls("fmSetActivatedFabricPartitions") >= 1; }, 15s));
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto now = fm_->ActiveVfs();
        return now.ok() && now->count(pid) && now->at(pid) == vfs;
      },
      10s));

  // The pod goes: the partition is deactivated.
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vgpu-vm"));
  EXPECT_TRUE(WaitUntil([&] { return ActivePartitions().empty(); }, 10s))
      << "partition " << pid << " stayed active after its pod went";
  for (const auto& list : JournaledVfLists()) EXPECT_EQ(list, vfs);
  ExpectJournalVerifies();
}

TEST_F(VgpuTest, MetricsAndLabelsCountVfsAndTheirPartitions) {  // SPEC §8.1, §8.2, §9
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kVfH100});
  const auto labels = dir() / "features.d" / "gpu-fabric";
  std::filesystem::create_directories(labels.parent_path());
  StartServe(true, {{"--metrics-address", "127.0.0.1:0"}, {"--node-labels-file", labels.string()}});
  const int port = MetricsPort();
  ASSERT_GT(port, 0);
  const std::string healthy =
      "gpu_fabric_devices{health=\"healthy\",resource=\"" + resource_ + "\"}";
  EXPECT_TRUE(WaitUntil(
      [&] {
        return SampleValue(HttpGet(port, "/metrics").body, healthy) == ConfiguredVfs().size();
      },
      10s))
      << HttpGet(port, "/metrics").body;
  std::string text;
  EXPECT_TRUE(WaitUntil([&] { return (text = ReadText(labels)) == ExpectedLabels({}); }, 10s))
      << text;

  const std::uint32_t pid = PartitionsOfSize(4)[0];
  const auto gpus = PartitionBdfs(pid);
  std::vector<std::string> request;
  for (const auto& gpu : gpus) request.push_back(VfOn(gpu));
  auto answer = Allocate({request});
  ASSERT_TRUE(answer.ok()) << Describe(answer.status);
  const std::set<std::string> held(gpus.begin(), gpus.end());
  EXPECT_TRUE(WaitUntil([&] { return (text = ReadText(labels)) == ExpectedLabels(held); }, 10s))
      << text << "\nexpected:\n"
      << ExpectedLabels(held);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return SampleValue(HttpGet(port, "/metrics").body, "gpu_fabric_partitions_active") == 1;
      },
      10s));
}

TEST_F(VgpuTest, WholeGpusAndVfsOnOneFabricManagerNodeRefuseToStart) {
  Prepare({.vgpu_preset = sim::VgpuNodePreset::kVfH100});
  // One GPU handed over whole: Fabric Manager cannot serve both modes.
  const std::string gpu = node_.vfs.back().parent_bdf;
  ASSERT_TRUE(node_.RebindDriver(gpu, "vfio-pci").ok());
  auto serve = Spawn(ServeArgs(), "serve-mixed");
  const auto ended = serve->WaitForExit(20s);
  ASSERT_TRUE(ended.has_value()) << "serve did not stop on a node with two FM modes";
  EXPECT_FALSE(ended->success());
  const std::string log = serve->Log();
  EXPECT_NE(log.find("Fabric Manager runs in one mode per node"), std::string::npos) << log;
  EXPECT_NE(log.find("FABRIC_MODE=2"), std::string::npos) << log;
}

}  // namespace
}  // namespace gfp::testing
