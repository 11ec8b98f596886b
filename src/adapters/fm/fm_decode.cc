#include "adapters/fm/fm_decode.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string>

namespace gfp::adapters::fm {
namespace {

Status Malformed(const std::string& what) {
  return DataLoss("Fabric Manager returned malformed data: " + what);
}

// Reads a C string that must end inside its fixed buffer and hold printable ASCII only.
template <std::size_t N>
Result<std::string> DecodeString(const char (&buffer)[N], const std::string& field) {
  std::size_t length = strnlen(buffer, N);
  if (length == N) {
    return Malformed(field + " is not NUL-terminated within its " + std::to_string(N) +
                     "-byte buffer");
  }
  for (std::size_t i = 0; i < length; ++i) {
    unsigned char c = static_cast<unsigned char>(buffer[i]);
    if (c < 0x20 || c > 0x7e) {
      return Malformed(field + " contains a non-printable byte at offset " + std::to_string(i));
    }
  }
  return std::string(buffer, length);
}

Status CheckCount(unsigned value, std::size_t maximum, const std::string& field) {
  if (value > maximum) {
    return Malformed(field + " = " + std::to_string(value) + " is above the maximum " +
                     std::to_string(maximum));
  }
  return Status::Ok();
}

Status CheckPhysicalIds(const unsigned* ids, unsigned count, const std::string& where,
                        std::vector<std::uint32_t>* out) {
  std::set<unsigned> seen;
  for (unsigned g = 0; g < count; ++g) {
    unsigned id = ids[g];
    if (id == 0 || id > abi::kMaxNumGpus) {
      return Malformed(where + " GPU " + std::to_string(g) + " has physicalId " +
                       std::to_string(id) + " (expected 1.." + std::to_string(abi::kMaxNumGpus) +
                       ")");
    }
    if (!seen.insert(id).second) {
      return Malformed(where + " lists physicalId " + std::to_string(id) + " twice");
    }
    out->push_back(id);
  }
  return Status::Ok();
}

Result<PartitionInfo> DecodePartition(const abi::FabricPartitionInfo& raw) {
  const std::string where = "partition " + std::to_string(raw.partitionId);
  GFP_RETURN_IF_ERROR(CheckCount(raw.numGpus, abi::kMaxNumGpus, where + " numGpus"));
  if (raw.numGpus == 0) return Malformed(where + " has no GPUs");
  if (raw.isActive > 1) {
    return Malformed(where + " isActive = " + std::to_string(raw.isActive) + " (expected 0 or 1)");
  }
  PartitionInfo info;
  info.id = raw.partitionId;
  info.active = raw.isActive == 1;
  unsigned ids[abi::kMaxNumGpus];
  for (unsigned g = 0; g < raw.numGpus; ++g) {
    const abi::FabricPartitionGpuInfo& gpu = raw.gpuInfo[g];
    const std::string gpu_where = where + " GPU " + std::to_string(g);
    ids[g] = gpu.physicalId;
    GFP_RETURN_IF_ERROR(DecodeString(gpu.uuid, gpu_where + " uuid").status());
    GFP_ASSIGN_OR_RETURN(std::string bus_id, DecodeString(gpu.pciBusId, gpu_where + " pciBusId"));
    info.pci_bus_ids.push_back(std::move(bus_id));
    GFP_RETURN_IF_ERROR(
        CheckCount(gpu.maxNumNvLinks, abi::kMaxNumNvlinkPorts, gpu_where + " maxNumNvLinks"));
    GFP_RETURN_IF_ERROR(
        CheckCount(gpu.numNvLinksAvailable, gpu.maxNumNvLinks, gpu_where + " numNvLinksAvailable"));
    if (g == 0) {
      info.nvlinks_available = gpu.numNvLinksAvailable;
      info.max_nvlinks = gpu.maxNumNvLinks;
      info.nvlink_line_rate_mbps = gpu.nvlinkLineRateMBps;
    } else {
      info.nvlinks_available = std::min(info.nvlinks_available, gpu.numNvLinksAvailable);
      info.max_nvlinks = std::max(info.max_nvlinks, gpu.maxNumNvLinks);
      info.nvlink_line_rate_mbps = std::min(info.nvlink_line_rate_mbps, gpu.nvlinkLineRateMBps);
    }
  }
  GFP_RETURN_IF_ERROR(CheckPhysicalIds(ids, raw.numGpus, where, &info.physical_ids));
  return info;
}

Result<NvlinkFailedDevice> DecodeFailedDevice(const abi::NvlinkFailedDeviceInfo& raw,
                                              const std::string& where) {
  NvlinkFailedDevice device;
  GFP_ASSIGN_OR_RETURN(device.uuid, DecodeString(raw.uuid, where + " uuid"));
  GFP_ASSIGN_OR_RETURN(device.pci_bus_id, DecodeString(raw.pciBusId, where + " pciBusId"));
  GFP_RETURN_IF_ERROR(CheckCount(raw.numPorts, abi::kMaxNumNvlinkPorts, where + " numPorts"));
  device.ports.assign(raw.portNum, raw.portNum + raw.numPorts);
  return device;
}

}  // namespace

Result<std::vector<PartitionInfo>> DecodePartitionList(const abi::FabricPartitionList& list) {
  GFP_RETURN_IF_ERROR(
      CheckCount(list.numPartitions, abi::kMaxFabricPartitions, "partition list numPartitions"));
  std::vector<PartitionInfo> partitions;
  partitions.reserve(list.numPartitions);
  std::set<std::uint32_t> ids;
  for (unsigned p = 0; p < list.numPartitions; ++p) {
    GFP_ASSIGN_OR_RETURN(PartitionInfo info, DecodePartition(list.partitionInfo[p]));
    if (!ids.insert(info.id).second) {
      return Malformed("partition id " + std::to_string(info.id) + " is listed twice");
    }
    partitions.push_back(std::move(info));
  }
  return partitions;
}

Result<std::vector<std::uint32_t>> DecodeUnsupportedPartitions(
    const abi::UnsupportedFabricPartitionList& list) {
  GFP_RETURN_IF_ERROR(CheckCount(list.numPartitions, abi::kMaxFabricPartitions,
                                 "unsupported partition list numPartitions"));
  std::vector<std::uint32_t> result;
  std::set<std::uint32_t> seen;
  for (unsigned p = 0; p < list.numPartitions; ++p) {
    const abi::UnsupportedFabricPartitionInfo& raw = list.partitionInfo[p];
    const std::string where = "unsupported partition " + std::to_string(raw.partitionId);
    GFP_RETURN_IF_ERROR(CheckCount(raw.numGpus, abi::kMaxNumGpus, where + " numGpus"));
    std::vector<std::uint32_t> physical_ids;
    GFP_RETURN_IF_ERROR(CheckPhysicalIds(raw.gpuPhysicalIds, raw.numGpus, where, &physical_ids));
    if (!seen.insert(raw.partitionId).second) {
      return Malformed(where + " is listed twice");
    }
    result.push_back(raw.partitionId);
  }
  return result;
}

Result<NvlinkFailedDevices> DecodeNvlinkFailedDevices(const abi::NvlinkFailedDevices& devices) {
  GFP_RETURN_IF_ERROR(
      CheckCount(devices.numGpus, abi::kMaxNumGpus, "NVLink failed devices numGpus"));
  GFP_RETURN_IF_ERROR(
      CheckCount(devices.numSwitches, abi::kMaxNumNvSwitches, "NVLink failed devices numSwitches"));
  NvlinkFailedDevices result;
  for (unsigned g = 0; g < devices.numGpus; ++g) {
    GFP_ASSIGN_OR_RETURN(NvlinkFailedDevice device,
                         DecodeFailedDevice(devices.gpuInfo[g], "failed GPU " + std::to_string(g)));
    result.gpus.push_back(std::move(device));
  }
  for (unsigned s = 0; s < devices.numSwitches; ++s) {
    GFP_ASSIGN_OR_RETURN(
        NvlinkFailedDevice device,
        DecodeFailedDevice(devices.switchInfo[s], "failed NVSwitch " + std::to_string(s)));
    result.switches.push_back(std::move(device));
  }
  return result;
}

}  // namespace gfp::adapters::fm
