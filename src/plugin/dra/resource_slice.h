// This node's ResourceSlice (SPEC §11 "Devices"), built from facts: pure, no I/O. One slice per
// node with every healthy whole GPU; each device carries the attributes the DeviceClass and the
// claim templates select on, among them `partition<S>`: the id of the offered partition of size
// S that holds the GPU (sm::OfferPartitions), so a claim's matchAttribute on it admits exactly the
// GPUs of one offered partition.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "statemachine/state.h"

namespace gfp::plugin::dra {

// What the slice says of one GPU.
struct SliceGpu {
  std::string bdf;           // 0000:1b:00.0
  std::string pcie_root;     // pci0000:17; empty when unknown (the attribute is then left out)
  std::string product_name;  // the pci.ids device name
  int numa_node = 0;
  int iommu_group = 0;
  std::optional<std::uint32_t> module_id;           // with Fabric Manager
  std::map<std::size_t, std::uint32_t> partitions;  // size -> offered partition holding it

  bool operator==(const SliceGpu&) const = default;
};

// Whose slice it is.
struct SliceOwner {
  std::string node_name;
  std::string node_uid;  // metadata.uid of the Node: the slice's owner reference
  std::string driver;    // gpu-fabric-plugin.io
};

// Facts of a GPU that the state does not hold, found on the host.
struct HostGpuFacts {
  std::string pcie_root;
  std::string product_name;
};

// The device name of a GPU: "gpu-" and its BDF with ':' and '.' as '-' (gpu-0000-1b-00-0).
std::string DeviceName(std::string_view bdf);

// The GPUs the slice lists, from the state: every healthy whole GPU (passthrough) of the
// inventory, with its module id and the offered partitions that hold it; `host` adds what the
// state does not know. In BDF order; at most kMaxSliceDevices.
std::vector<SliceGpu> SliceGpus(const sm::State& state,
                                const std::map<std::string, HostGpuFacts>& host);

// The slice's `spec.devices`: canonical (devices in name order, keys sorted), so that equal
// facts give equal bytes and the SHA-256 journaled in ResourceSlicePublished.
nlohmann::json DevicesJson(const std::vector<SliceGpu>& gpus);

// Lowercase hex SHA-256 of DevicesJson's compact text.
std::string DevicesSha256(const nlohmann::json& devices);

// The whole object to create: resource.k8s.io/v1 ResourceSlice, generateName
// "<node>-<driver>-", owned by the Node (controller), pool = node name, one slice in the pool.
nlohmann::json ResourceSliceJson(const SliceOwner& owner, std::int64_t generation,
                                 const nlohmann::json& devices);

// A ResourceSlice holds at most 128 devices.
inline constexpr std::size_t kMaxSliceDevices = 128;
// An attribute's string value holds at most 64 characters.
inline constexpr std::size_t kMaxAttributeString = 64;

}  // namespace gfp::plugin::dra
