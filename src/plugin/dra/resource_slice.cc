#include "plugin/dra/resource_slice.h"

#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "statemachine/offered_partitions.h"

namespace gfp::plugin::dra {
namespace {

nlohmann::json StringAttribute(std::string value) {
  if (value.size() > kMaxAttributeString) value.resize(kMaxAttributeString);
  return {{"string", std::move(value)}};
}

nlohmann::json IntAttribute(std::int64_t value) { return {{"int", value}}; }

nlohmann::json DeviceJson(const SliceGpu& gpu) {
  nlohmann::json attributes = {
      {"type", StringAttribute("vfio-gpu")},
      {"resource.kubernetes.io/pciBusID", StringAttribute(gpu.bdf)},
      {"productName", StringAttribute(gpu.product_name)},
      {"numaNode", IntAttribute(gpu.numa_node)},
      {"iommuGroup", IntAttribute(gpu.iommu_group)},
  };
  if (!gpu.pcie_root.empty()) {
    attributes["resource.kubernetes.io/pcieRoot"] = StringAttribute(gpu.pcie_root);
  }
  if (gpu.module_id) attributes["gpuModuleID"] = IntAttribute(*gpu.module_id);
  for (const auto& [size, partition] : gpu.partitions) {
    attributes["partition" + std::to_string(size)] = IntAttribute(partition);
  }
  return {{"name", DeviceName(gpu.bdf)}, {"attributes", std::move(attributes)}};
}

int GroupNumber(const std::string& group) {
  int n = 0;
  for (char c : group) {
    if (c < '0' || c > '9' || n > 100'000'000) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

std::string DeviceName(std::string_view bdf) {
  std::string name = "gpu-";
  for (char c : bdf) name += (c == ':' || c == '.') ? '-' : c;
  return name;
}

std::vector<SliceGpu> SliceGpus(const sm::State& state,
                                const std::map<std::string, HostGpuFacts>& host) {
  const sm::OfferedPartitions offer = sm::OfferPartitions(state.partitions.value());
  std::vector<SliceGpu> out;
  for (const auto& [bdf, device] : state.devices) {
    if (device.kind != sm::DeviceKind::kPciPassthrough || !device.healthy) continue;
    if (out.size() == kMaxSliceDevices) break;
    SliceGpu gpu;
    gpu.bdf = bdf;
    gpu.numa_node = device.numa_node;
    gpu.iommu_group = GroupNumber(device.iommu_group);
    if (auto facts = host.find(bdf); facts != host.end()) {
      gpu.pcie_root = facts->second.pcie_root;
      gpu.product_name = facts->second.product_name;
    }
    if (auto module = state.module_of_bdf.find(bdf); module != state.module_of_bdf.end()) {
      gpu.module_id = module->second;
      if (auto offered = offer.of_module.find(module->second); offered != offer.of_module.end()) {
        gpu.partitions = offered->second;
      }
    }
    out.push_back(std::move(gpu));
  }
  return out;
}

nlohmann::json DevicesJson(const std::vector<SliceGpu>& gpus) {
  std::vector<const SliceGpu*> by_name;
  for (const auto& gpu : gpus) by_name.push_back(&gpu);
  std::sort(by_name.begin(), by_name.end(), [](const SliceGpu* a, const SliceGpu* b) {
    return DeviceName(a->bdf) < DeviceName(b->bdf);
  });
  nlohmann::json devices = nlohmann::json::array();
  for (const SliceGpu* gpu : by_name) devices.push_back(DeviceJson(*gpu));
  return devices;
}

std::string DevicesSha256(const nlohmann::json& devices) {
  const std::string text = devices.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  std::string hex;
  for (unsigned char byte : digest) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", byte);
    hex += pair;
  }
  return hex;
}

nlohmann::json ResourceSliceJson(const SliceOwner& owner, std::int64_t generation,
                                 const nlohmann::json& devices) {
  nlohmann::json reference = {{"apiVersion", "v1"},
                              {"kind", "Node"},
                              {"name", owner.node_name},
                              {"uid", owner.node_uid},
                              {"controller", true}};
  return {
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceSlice"},
      {"metadata",
       {{"generateName", owner.node_name + "-" + owner.driver + "-"},
        {"ownerReferences", nlohmann::json::array({reference})}}},
      {"spec",
       {{"driver", owner.driver},
        {"nodeName", owner.node_name},
        {"pool",
         {{"name", owner.node_name}, {"generation", generation}, {"resourceSliceCount", 1}}},
        {"devices", devices}}},
  };
}

}  // namespace gfp::plugin::dra
