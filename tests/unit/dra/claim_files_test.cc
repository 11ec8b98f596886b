// A prepared claim's files (SPEC §11): the CDI spec of its GPUs, and per request the device
// metadata KubeVirt 1.9 reads with the CDI spec that mounts it. The expected metadata and mount are
// the hand-written example of reference/dra/kubevirt-dra-metadata.md §6 (but for the host path,
// keyed by the claim's uid here, by <ns>_<claim> upstream); the CDI specs are checked
// against the vendored CDI schema; KubeVirt's reading rules (§2-§4) are checked by a reader
// written here from that document.
#include "plugin/dra/claim_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "common/temp_dir.h"
#include "process/child_process.h"
#include "unit/dra/reference_dir.h"

namespace gfp::plugin::dra {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The claim of kubevirt-dra-metadata.md §6: VM vm1's claim entry `gpus` from a template, two
// requests of one GPU each.
PreparedClaim ExampleClaim() {
  PreparedClaim c;
  c.driver = "gpu-fabric-plugin.io";
  c.pool = "node-a";
  c.uid = "6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b";
  c.namespace_name = "default";
  c.name = "virt-launcher-vm1-x7k2p-gpus-4q8zt";
  c.pod_claim_name = "gpus";
  c.gpus = {{"gpu0", "0000:1b:00.0", {"/dev/vfio/42", "/dev/vfio/vfio"}},
            {"gpu1", "0000:43:00.0", {"/dev/vfio/43", "/dev/vfio/vfio"}}};
  return c;
}

const ClaimFileDirs kDirs = {"/var/run/cdi", "/var/lib/kubelet/plugins/gpu-fabric-plugin.io"};

const ClaimFile& FileAt(const std::vector<ClaimFile>& files, const std::string& path) {
  for (const auto& f : files) {
    if (f.path == path) return f;
  }
  ADD_FAILURE() << "no file " << path;
  static const ClaimFile none;
  return none;
}

TEST(ClaimFiles, TheMetadataAndItsMountAreTheReferenceExample) {
  const auto files = ClaimFiles(ExampleClaim(), kDirs);
  ASSERT_EQ(files.size(), 5u);
  const auto& metadata = FileAt(files,
                                "/var/lib/kubelet/plugins/gpu-fabric-plugin.io/dra-device-metadata/"
                                "6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b/gpu0/metadata.json");
  const nlohmann::json expected_metadata = nlohmann::json::parse(R"({
    "kind": "DeviceMetadata",
    "apiVersion": "metadata.resource.k8s.io/v1alpha1",
    "metadata": {"name": "virt-launcher-vm1-x7k2p-gpus-4q8zt", "namespace": "default",
                 "uid": "6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b", "generation": 1},
    "podClaimName": "gpus",
    "requests": [{"name": "gpu0", "devices": [{
      "driver": "gpu-fabric-plugin.io", "pool": "node-a", "name": "gpu-0000-1b-00-0",
      "attributes": {"resource.kubernetes.io/pciBusID": {"string": "0000:1b:00.0"}}}]}]})");
  EXPECT_EQ(nlohmann::json::parse(metadata.content), expected_metadata);
  EXPECT_EQ(metadata.content.back(), '\n');

  const auto& mount = FileAt(
      files,
      "/var/run/cdi/gpu-fabric-plugin.io_metadata_6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b_gpu0.json");
  const nlohmann::json expected_mount = nlohmann::json::parse(R"({
    "cdiVersion": "0.5.0", "kind": "gpu-fabric-plugin.io/metadata",
    "devices": [{"name": "6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b_gpu0", "containerEdits": {"mounts": [{
      "hostPath": "/var/lib/kubelet/plugins/gpu-fabric-plugin.io/dra-device-metadata/6f1d2c3a-8b4e-4f60-9a71-2c5d8e9f0a1b/gpu0/metadata.json",
      "containerPath": "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpus/gpu0/gpu-fabric-plugin.io-metadata.json",
      "options": ["ro", "bind"]}]}}]})");
  EXPECT_EQ(nlohmann::json::parse(mount.content), expected_mount);
}

TEST(ClaimFiles, ANamedClaimIsMountedUnderItsName) {
  PreparedClaim c = ExampleClaim();
  c.pod_claim_name.clear();
  c.name = "shared-gpus";
  const auto files = ClaimFiles(c, kDirs);
  const auto& mount =
      FileAt(files, "/var/run/cdi/gpu-fabric-plugin.io_metadata_" + c.uid + "_gpu1.json");
  const auto json = nlohmann::json::parse(mount.content);
  EXPECT_EQ(json["devices"][0]["containerEdits"]["mounts"][0]["containerPath"],
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/shared-gpus/gpu1/"
            "gpu-fabric-plugin.io-metadata.json");
  const auto& metadata = FileAt(
      files, kDirs.plugin_dir.string() + "/dra-device-metadata/" + c.uid + "/gpu1/metadata.json");
  EXPECT_FALSE(nlohmann::json::parse(metadata.content).contains("podClaimName"));
}

TEST(ClaimFiles, TheGpuSpecHandsEachGpuItsDeviceNodes) {
  PreparedClaim c = ExampleClaim();
  c.gpus[1].device_nodes = {"/dev/vfio/devices/vfio3", "/dev/iommu"};
  const auto files = ClaimFiles(c, kDirs);
  const auto spec = nlohmann::json::parse(
      FileAt(files, "/var/run/cdi/gpu-fabric-plugin.io_" + c.uid + ".json").content);
  EXPECT_EQ(spec["cdiVersion"], "0.5.0");
  EXPECT_EQ(spec["kind"], "gpu-fabric-plugin.io/gpu");
  ASSERT_EQ(spec["devices"].size(), 2u);
  EXPECT_EQ(spec["devices"][0]["name"], c.uid + "-gpu-0000-1b-00-0");
  EXPECT_EQ(spec["devices"][0]["containerEdits"]["deviceNodes"],
            nlohmann::json::parse(R"([{"path": "/dev/vfio/42"}, {"path": "/dev/vfio/vfio"}])"));
  EXPECT_EQ(
      spec["devices"][1]["containerEdits"]["deviceNodes"],
      nlohmann::json::parse(R"([{"path": "/dev/vfio/devices/vfio3"}, {"path": "/dev/iommu"}])"));
}

TEST(ClaimFiles, CdiIdsNameEachGpuAndTheFirstOfARequestCarriesItsMetadata) {
  PreparedClaim c = ExampleClaim();
  EXPECT_THAT(CdiDeviceIds(c, 0),
              ElementsAre("gpu-fabric-plugin.io/gpu=" + c.uid + "-gpu-0000-1b-00-0",
                          "gpu-fabric-plugin.io/metadata=" + c.uid + "_gpu0"));
  c.gpus[1].request = "gpu0";
  EXPECT_THAT(CdiDeviceIds(c, 1),
              ElementsAre("gpu-fabric-plugin.io/gpu=" + c.uid + "-gpu-0000-43-00-0"));
  EXPECT_EQ(ClaimFiles(c, kDirs).size(), 3u) << "one metadata file and mount per request";
}

TEST(ClaimFiles, UnprepareRemovesEveryFileAndTheMetadataFolder) {
  const PreparedClaim c = ExampleClaim();
  const auto paths = ClaimPaths(c, kDirs);
  for (const auto& file : ClaimFiles(c, kDirs)) {
    EXPECT_NE(std::find(paths.begin(), paths.end(), file.path), paths.end()) << file.path;
  }
  EXPECT_EQ(paths.back(), kDirs.plugin_dir / "dra-device-metadata" / c.uid);
}

// kubevirt-dra-metadata.md §2-§4, as virt-launcher 1.9 reads a request's file: the first object
// with apiVersion v1alpha1, the request by exact name, exactly one device, no mdevUUID, a pciBusID
// string with its domain. Returns the PCI address, or why it would fail.
std::string VirtLauncherReads(const std::string& content, const std::string& request) {
  const auto object = nlohmann::json::parse(content);
  if (object.value("apiVersion", "") != "metadata.resource.k8s.io/v1alpha1") return "apiVersion";
  for (const auto& r : object["requests"]) {
    if (r["name"] != request) continue;
    if (r["devices"].size() != 1) return "device count";
    const auto& a = r["devices"][0]["attributes"];
    if (a.contains("mdevUUID")) return "mdevUUID present";
    const std::string pci = a["resource.kubernetes.io/pciBusID"].value("string", "");
    static const std::regex address("^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$");
    return std::regex_match(pci, address) ? pci : "pciBusID " + pci;
  }
  return "request not found";
}

TEST(ClaimFiles, VirtLauncherFindsEachRequestsGpu) {
  const PreparedClaim c = ExampleClaim();
  const auto files = ClaimFiles(c, kDirs);
  for (const auto& gpu : c.gpus) {
    const auto& file =
        FileAt(files, (ClaimMetadataDir(c, kDirs) / gpu.request / "metadata.json").string());
    EXPECT_EQ(VirtLauncherReads(file.content, gpu.request), gpu.bdf);
  }
}

TEST(ClaimFiles, EveryCdiSpecIsValidAgainstTheCdiSchema) {
  if (kReference.empty()) GTEST_SKIP() << "shared/reference not found beside the checkout";
  gfp::testing::TempDir dir;
  const auto check = [&](const std::string& content) -> std::pair<int, std::string> {
    std::ofstream(dir.path() / "spec.json") << content;
    process::ProcessOptions o;
    o.binary = "/usr/bin/python3";
    o.args = {std::string(GFP_SOURCE_DIR) + "/tests/common/schema_check.py", "cdi",
              kReference + "/dra/cdi-schema.json", kReference + "/dra/cdi-defs.json",
              (dir.path() / "spec.json").string()};
    o.log_path = dir.path() / "check.log";
    auto run = process::RunCommand(o);
    if (!run.ok()) return {-1, run.status().message()};
    return {run->status.ShellCode(), run->output};
  };
  int specs = 0;
  for (const auto& file : ClaimFiles(ExampleClaim(), kDirs)) {
    if (file.path.parent_path() != kDirs.cdi_dir) continue;
    ++specs;
    const auto result = check(file.content);
    EXPECT_EQ(result.first, 0) << file.path << ": " << result.second;
  }
  EXPECT_EQ(specs, 3);
  // The checker is shown to catch a spec the schema refuses.
  const auto spoiled =
      check(R"({"cdiVersion": "0.5.0", "kind": "a/b", "devices": [{"name": "x"}]})");
  EXPECT_EQ(spoiled.first, 1) << spoiled.second;
  EXPECT_THAT(spoiled.second, HasSubstr("'containerEdits' is a required property"));
}

}  // namespace
}  // namespace gfp::plugin::dra
