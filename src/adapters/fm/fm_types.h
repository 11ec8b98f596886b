// Plain C++ views of what Fabric Manager reports, decoded and validated from the SDK structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gfp::adapters::fm {

struct PartitionInfo {
  std::uint32_t id = 0;
  bool active = false;
  std::vector<std::uint32_t> physical_ids;  // GPU module ids, in FM's order
  // pciBusId of each GPU, same order. Only HGX A100 / HGX-2 class FM fills these in; H100 and
  // later report "" or "00000000:00:00.0" (fabric-manager.md §3.7).
  std::vector<std::string> pci_bus_ids;
  // Per-GPU NVLink counts; across the partition's GPUs the smallest available and the largest
  // maximum, so `nvlinks_available < max_nvlinks` means "degraded" if any GPU is.
  std::uint32_t nvlinks_available = 0;
  std::uint32_t max_nvlinks = 0;
  std::uint32_t nvlink_line_rate_mbps = 0;

  bool degraded() const { return nvlinks_available < max_nvlinks; }
  friend bool operator==(const PartitionInfo&, const PartitionInfo&) = default;
};

struct NvlinkFailedDevice {
  std::string uuid;
  std::string pci_bus_id;
  std::vector<std::uint32_t> ports;
  friend bool operator==(const NvlinkFailedDevice&, const NvlinkFailedDevice&) = default;
};

struct NvlinkFailedDevices {
  std::vector<NvlinkFailedDevice> gpus;
  std::vector<NvlinkFailedDevice> switches;
};

enum class ConnectionState {
  kDisconnected,  // never connected, or closed
  kConnected,
  kBroken,  // the last call reported a lost connection or timed out; the next call reconnects
};

const char* ConnectionStateName(ConnectionState state);

}  // namespace gfp::adapters::fm
