// This node's ResourceSlice (SPEC §11): device names and attributes, canonical bytes, the API's
// schema and limits, and — the property DRA mode exists for — a reference allocator written apart
// from the product: on every real partition table, with degraded partitions and unhealthy GPUs,
// the device sets the slice admits under each claim template's matchAttribute are exactly the
// offered partitions (per size, the supported non-degraded ones in id order, each taken when it
// shares no GPU with one taken before) whose GPUs are all healthy.
#include "plugin/dra/resource_slice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/sm_fixtures.h"
#include "common/temp_dir.h"
#include "process/child_process.h"
#include "unit/dra/reference_dir.h"

namespace gfp::plugin::dra {
namespace {

using gfp::testing::Driver;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;
using GpuSet = std::set<std::string>;

// A node for a reference table: module m is GPU 0000:<0x10 + 8(m-1)>:00.0.
struct TableNode {
  gfp::testing::NodeFixture fixture;
  nlohmann::json table;
};

TableNode LoadTableNode(const std::string& name) {
  TableNode node;
  std::ifstream in(kReference + "/partition-tables/" + name);
  node.table = nlohmann::json::parse(in);
  std::set<std::uint32_t> modules;
  for (const auto& p : node.table["partitions"]) {
    for (auto m : p["physical_ids"]) modules.insert(m.get<std::uint32_t>());
  }
  node.fixture.resource = "nvidia.com/GPU";
  for (std::uint32_t m = 1; m <= modules.size(); ++m) {
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", 0x10 + 8 * (m - 1));
    node.fixture.bdfs_by_module.push_back(bdf);
    node.fixture.numa_by_module.push_back(m <= modules.size() / 2 ? 0 : 1);
  }
  for (const auto& p : node.table["partitions"]) {
    node.fixture.partitions.push_back(
        {p["id"].get<std::uint32_t>(), p["physical_ids"].get<std::vector<std::uint32_t>>()});
  }
  return node;
}

// ---- the test's own view, written from SPEC §11 and the table, not from the product ----

// Per size: the offered partitions' GPU sets (greedy disjoint cover in id order of the partitions
// that are not degraded), then only those whose GPUs are all healthy.
std::map<std::size_t, std::set<GpuSet>> ExpectedAdmissible(const TableNode& node,
                                                           const std::set<std::uint32_t>& degraded,
                                                           const GpuSet& unhealthy) {
  std::map<std::size_t, std::vector<const nlohmann::json*>> by_size;
  for (const auto& p : node.table["partitions"]) {
    if (degraded.count(p["id"].get<std::uint32_t>())) continue;
    by_size[p["physical_ids"].size()].push_back(&p);
  }
  std::map<std::size_t, std::set<GpuSet>> out;
  for (auto& [size, partitions] : by_size) {
    std::sort(partitions.begin(), partitions.end(), [](auto* a, auto* b) {
      return (*a)["id"].template get<int>() < (*b)["id"].template get<int>();
    });
    GpuSet taken;
    for (const auto* p : partitions) {
      GpuSet gpus;
      for (auto m : (*p)["physical_ids"]) {
        gpus.insert(node.fixture.bdfs_by_module[m.get<std::size_t>() - 1]);
      }
      bool overlaps = false;
      for (const auto& g : gpus) overlaps = overlaps || taken.count(g);
      if (overlaps) continue;
      taken.insert(gpus.begin(), gpus.end());
      bool healthy = true;
      for (const auto& g : gpus) healthy = healthy && !unhealthy.count(g);
      if (healthy) out[size].insert(gpus);
    }
  }
  return out;
}

// The reference allocator: the sets of `size` devices of the slice that a claim from template
// fm-<size>gpu admits (each device of the class `type == vfio-gpu`, all with the same value of
// "<driver>/partition<size>"), by pciBusID. Every subset of every group is tried, so a group
// with more GPUs than a partition would show as extra sets.
std::set<GpuSet> Admissible(const nlohmann::json& devices, std::size_t size) {
  std::map<std::int64_t, std::vector<std::string>> groups;
  const std::string key = "partition" + std::to_string(size);
  for (const auto& d : devices) {
    const auto& a = d["attributes"];
    if (a["type"]["string"] != "vfio-gpu" || !a.contains(key)) continue;
    groups[a[key]["int"].get<std::int64_t>()].push_back(
        a["resource.kubernetes.io/pciBusID"]["string"].get<std::string>());
  }
  std::set<GpuSet> out;
  for (const auto& [value, gpus] : groups) {
    if (gpus.size() < size) continue;
    std::vector<bool> pick(gpus.size(), false);
    std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(size), true);
    do {
      GpuSet chosen;
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (pick[i]) chosen.insert(gpus[i]);
      }
      out.insert(chosen);
    } while (std::prev_permutation(pick.begin(), pick.end()));
  }
  return out;
}

// A booted node with `degraded` partitions at 0 NVLinks and `unhealthy` GPUs.
sm::State NodeState(const TableNode& node, const std::set<std::uint32_t>& degraded,
                    const GpuSet& unhealthy) {
  Driver d;
  d.Boot(node.fixture);
  sm::ObserveFabricState f;
  f.now = d.now;
  f.partitions = gfp::testing::PartitionsOf(node.fixture);
  for (auto& p : f.partitions) {
    if (degraded.count(p.id())) {
      p.set_max_nvlinks(18);
      p.set_nvlinks_available(6);
    }
  }
  d.Run(f);
  for (const auto& gpu : unhealthy) d.Run(sm::ObserveDeviceHealth{d.now, gpu, false, "gone"});
  return d.state;
}

class ReferenceAllocator : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceAllocator, TheSliceAdmitsExactlyTheHealthyOfferedPartitions) {
  if (kReference.empty()) GTEST_SKIP() << "shared/reference not found beside the checkout";
  const TableNode node = LoadTableNode(GetParam());
  std::vector<std::pair<std::set<std::uint32_t>, GpuSet>> cases = {{{}, {}}};
  for (const auto& gpu : node.fixture.bdfs_by_module) cases.push_back({{}, {gpu}});
  for (const auto& p : node.table["partitions"]) {
    if (p["physical_ids"].size() > 1) cases.push_back({{p["id"].get<std::uint32_t>()}, {}});
  }
  cases.push_back({{1}, {node.fixture.bdfs_by_module.back()}});
  std::set<std::size_t> sizes;
  for (const auto& p : node.table["partitions"]) sizes.insert(p["physical_ids"].size());
  for (const auto& [degraded, unhealthy] : cases) {
    const sm::State state = NodeState(node, degraded, unhealthy);
    const nlohmann::json devices = DevicesJson(SliceGpus(state, {}));
    EXPECT_EQ(devices.size(), node.fixture.bdfs_by_module.size() - unhealthy.size());
    const auto expected = ExpectedAdmissible(node, degraded, unhealthy);
    for (std::size_t size : sizes) {
      const auto want = expected.count(size) ? expected.at(size) : std::set<GpuSet>{};
      EXPECT_EQ(Admissible(devices, size), want)
          << GetParam() << " size " << size << ", degraded partitions " << degraded.size()
          << (degraded.empty() ? "" : " (first " + std::to_string(*degraded.begin()) + ")")
          << ", unhealthy " << (unhealthy.empty() ? "none" : *unhealthy.begin());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, ReferenceAllocator,
                         ::testing::Values("hgx-h100-8gpu.json", "hgx-b200-8gpu.json",
                                           "hgx-a100-16gpu.json", "hgx2-16gpu.json"),
                         [](const auto& param_info) {
                           std::string name =
                               param_info.param.substr(0, param_info.param.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- names, attributes, canonical bytes ----

TEST(ResourceSlice, DeviceNamesAreTheBdfAsALabel) {
  EXPECT_EQ(DeviceName("0000:1b:00.0"), "gpu-0000-1b-00-0");
  EXPECT_EQ(DeviceName("0001:c3:1f.7"), "gpu-0001-c3-1f-7");
}

TEST(ResourceSlice, AGpuCarriesTheAttributesOfSpec11) {
  SliceGpu gpu{"0000:1b:00.0", "pci0000:17", std::string(80, 'H'), 1, 42, 8, {{8, 0}, {4, 2}}};
  const nlohmann::json devices = DevicesJson({gpu});
  ASSERT_EQ(devices.size(), 1u);
  const nlohmann::json expected = {
      {"name", "gpu-0000-1b-00-0"},
      {"attributes",
       {{"type", {{"string", "vfio-gpu"}}},
        {"resource.kubernetes.io/pciBusID", {{"string", "0000:1b:00.0"}}},
        {"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:17"}}},
        {"productName", {{"string", std::string(64, 'H')}}},
        {"numaNode", {{"int", 1}}},
        {"iommuGroup", {{"int", 42}}},
        {"gpuModuleID", {{"int", 8}}},
        {"partition8", {{"int", 0}}},
        {"partition4", {{"int", 2}}}}}};
  EXPECT_EQ(devices[0], expected);
  gpu.pcie_root.clear();
  gpu.module_id.reset();
  gpu.partitions.clear();
  const nlohmann::json bare =
      DevicesJson({gpu})[0]["attributes"];  // a copy: the array is a temporary
  EXPECT_FALSE(bare.contains("resource.kubernetes.io/pcieRoot"));
  EXPECT_FALSE(bare.contains("gpuModuleID"));
  EXPECT_FALSE(bare.contains("partition8"));
}

TEST(ResourceSlice, EqualFactsGiveEqualBytesInAnyOrder) {
  const SliceGpu a{"0000:1b:00.0", "pci0000:17", "H100", 0, 1, 1, {{8, 0}}};
  const SliceGpu b{"0000:c3:00.0", "pci0000:b1", "H100", 1, 2, 2, {{8, 0}}};
  EXPECT_EQ(DevicesJson({a, b}).dump(), DevicesJson({b, a}).dump());
  EXPECT_EQ(DevicesSha256(DevicesJson({a, b})), DevicesSha256(DevicesJson({b, a})));
  SliceGpu moved = b;
  moved.partitions[8] = 1;
  EXPECT_NE(DevicesSha256(DevicesJson({a, b})), DevicesSha256(DevicesJson({a, moved})));
  EXPECT_EQ(DevicesSha256(nlohmann::json::array()),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");  // sha256("[]")
}

TEST(ResourceSlice, TheSliceIsOwnedByItsNodeAndIsItsPoolsOnlySlice) {
  const nlohmann::json slice =
      ResourceSliceJson({"node-a", "uid-n", "gpu-fabric-plugin.io"}, 3, nlohmann::json::array());
  EXPECT_EQ(slice["metadata"]["generateName"], "node-a-gpu-fabric-plugin.io-");
  const auto& owner = slice["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Node");
  EXPECT_EQ(owner["uid"], "uid-n");
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(slice["spec"]["pool"],
            nlohmann::json({{"name", "node-a"}, {"generation", 3}, {"resourceSliceCount", 1}}));
  EXPECT_EQ(slice["spec"]["nodeName"], "node-a");
  EXPECT_EQ(slice["spec"]["driver"], "gpu-fabric-plugin.io");
}

TEST(ResourceSlice, OnlyHealthyWholeGpusAreListed) {
  Driver d;
  const auto node = gfp::testing::H100Node();
  d.Boot(node);
  d.Run(sm::ObserveDeviceHealth{d.now, node.bdfs_by_module[1], false, "XID 79"});
  const auto gpus = SliceGpus(d.state, {{node.bdfs_by_module[0], {"pci0000:b1", "GH100"}}});
  ASSERT_EQ(gpus.size(), 7u);
  // Module 1 (0000:c3:00.0) in the H100 table: 0 (8), 1 (4), 3 (2), 7 (1).
  const auto first = std::find_if(
      gpus.begin(), gpus.end(), [&](const SliceGpu& g) { return g.bdf == node.bdfs_by_module[0]; });
  ASSERT_NE(first, gpus.end());
  EXPECT_EQ(first->pcie_root, "pci0000:b1");
  EXPECT_EQ(first->product_name, "GH100");
  EXPECT_EQ(first->module_id, 1u);
  EXPECT_EQ(first->partitions,
            (std::map<std::size_t, std::uint32_t>{{8, 0}, {4, 1}, {2, 3}, {1, 7}}));
  EXPECT_EQ(first->iommu_group, 10);
  for (const auto& g : gpus) EXPECT_NE(g.bdf, node.bdfs_by_module[1]);
}

// ---- the API's schema and limits ----

// The slice of a full 16-GPU node, checked against the vendored resource.k8s.io/v1 schema
// (unknown fields are errors) and the API's limits the schema does not state.
TEST(ResourceSlice, IsValidAgainstTheApiSchemaAndLimits) {
  if (kReference.empty()) GTEST_SKIP() << "shared/reference not found beside the checkout";
  const TableNode node = LoadTableNode("hgx-a100-16gpu.json");
  std::map<std::string, HostGpuFacts> host;
  for (const auto& bdf : node.fixture.bdfs_by_module) {
    host[bdf] = {"pci0000:" + bdf.substr(5, 2), std::string(100, 'A')};
  }
  const nlohmann::json devices = DevicesJson(SliceGpus(NodeState(node, {}, {}), host));
  const nlohmann::json slice =
      ResourceSliceJson({"node-a", "0b9a4d3e", "gpu-fabric-plugin.io"}, 1, devices);
  EXPECT_LE(devices.size(), 128u);
  for (const auto& d : devices) {
    EXPECT_LE(d["name"].get<std::string>().size(), 63u);
    EXPECT_LE(d["attributes"].size(), 32u) << "attributes and capacities together";
    for (const auto& [name, value] : d["attributes"].items()) {
      const std::string id =
          name.substr(name.find('/') == std::string::npos ? 0 : name.find('/') + 1);
      EXPECT_LE(id.size(), 63u) << name;
      EXPECT_EQ(value.size(), 1u) << "exactly one of int, bool, string, version: " << name;
      if (value.contains("string")) {
        EXPECT_LE(value["string"].get<std::string>().size(), 64u) << name;
      }
    }
  }
  gfp::testing::TempDir dir;
  const fs::path file = dir.path() / "slice.json";
  std::ofstream(file) << slice.dump(2);
  // Exit code and output of the schema checker on `object`.
  const auto check = [&](const fs::path& object) -> std::pair<int, std::string> {
    process::ProcessOptions o;
    o.binary = "/usr/bin/python3";
    o.args = {std::string(GFP_SOURCE_DIR) + "/tests/common/schema_check.py", "openapi",
              kReference + "/dra/resource.k8s.io_v1_openapi.json",
              "io.k8s.api.resource.v1.ResourceSlice", object.string()};
    o.log_path = dir.path() / "check.log";
    auto run = process::RunCommand(o);
    if (!run.ok()) return {-1, run.status().message()};
    return {run->status.ShellCode(), run->output};
  };
  const auto valid = check(file);
  EXPECT_EQ(valid.first, 0) << valid.second;
  // The checker is shown to catch a field the API does not have.
  nlohmann::json spoiled = slice;
  spoiled["spec"]["devices"][0]["basic"] = nlohmann::json::object();
  std::ofstream(dir.path() / "spoiled.json") << spoiled.dump();
  const auto invalid = check(dir.path() / "spoiled.json");
  EXPECT_EQ(invalid.first, 1) << invalid.second;
  EXPECT_THAT(invalid.second, HasSubstr("'basic' was unexpected"));
}

}  // namespace
}  // namespace gfp::plugin::dra
