#include "statemachine/state.h"

#include <algorithm>

#include "statemachine/events.pb.h"

namespace gfp::sm {

const char* AllocationStatusName(AllocationStatus status) {
  switch (status) {
    case AllocationStatus::kRequested:
      return "requested";
    case AllocationStatus::kGranted:
      return "granted";
    case AllocationStatus::kBound:
      return "bound";
    case AllocationStatus::kReleased:
      return "released";
    case AllocationStatus::kRejected:
      return "rejected";
  }
  return "unknown";
}

const char* IntentKindName(IntentKind kind) {
  return kind == IntentKind::kActivate ? "activate" : "deactivate";
}

std::map<Bdf, ModuleId> GpusWithModulesUnknownToFabricManager(const State& state) {
  std::map<Bdf, ModuleId> out;
  if (state.partitions.empty()) return out;
  std::set<ModuleId> known;
  for (const auto& [pid, p] : state.partitions)
    known.insert(p.physical_ids.begin(), p.physical_ids.end());
  for (const auto& [bdf, module] : state.module_of_bdf) {
    if (!known.count(module)) out[bdf] = module;
  }
  return out;
}

const char* DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kPciPassthrough:
      return "passthrough";
    case DeviceKind::kMdev:
      return "mdev";
    case DeviceKind::kVgpuVf:
      return "vgpu-vf";
  }
  return "?";
}

DeviceKind DeviceKindOf(int journaled_kind) {
  // Every events.DeviceKind is listed, so a new kind fails to compile (-Wswitch) until mapped.
  switch (static_cast<events::DeviceKind>(journaled_kind)) {
    case events::DEVICE_KIND_PCI_PASSTHROUGH:
      return DeviceKind::kPciPassthrough;
    case events::DEVICE_KIND_MDEV:
      return DeviceKind::kMdev;
    case events::DEVICE_KIND_VGPU_VF:
      return DeviceKind::kVgpuVf;
    case events::DeviceKind_INT_MIN_SENTINEL_DO_NOT_USE_:
    case events::DeviceKind_INT_MAX_SENTINEL_DO_NOT_USE_:
      break;
  }
  return DeviceKind::kPciPassthrough;  // a number this build does not know
}

Bdf GpuOf(const State& state, const std::string& device_id) {
  auto device = state.devices.find(device_id);
  if (device == state.devices.end() || device->second.parent_bdf.empty()) return device_id;
  return device->second.parent_bdf;
}

bool AnyMdev(const State& state, const std::vector<std::string>& device_ids) {
  for (const auto& id : device_ids) {
    auto device = state.devices.find(id);
    if (device != state.devices.end() && device->second.kind == DeviceKind::kMdev) return true;
  }
  return false;
}

bool AnyVf(const State& state, const std::vector<std::string>& device_ids) {
  for (const auto& id : device_ids) {
    auto device = state.devices.find(id);
    if (device != state.devices.end() && device->second.kind == DeviceKind::kVgpuVf) return true;
  }
  return false;
}

std::vector<Bdf> VfsInGpuOrder(const State& state, const std::vector<Bdf>& partition_gpus,
                               const std::vector<std::string>& device_ids) {
  if (!AnyVf(state, device_ids)) return {};
  std::vector<Bdf> out;
  for (const Bdf& gpu : partition_gpus) {
    auto on_gpu = std::find_if(device_ids.begin(), device_ids.end(),
                               [&](const std::string& id) { return GpuOf(state, id) == gpu; });
    if (on_gpu == device_ids.end()) return {};
    out.push_back(*on_gpu);
  }
  return out;
}

PartitionDevices DevicesOfPartition(const State& state, const PartitionState& partition) {
  PartitionDevices out;
  for (ModuleId module : partition.physical_ids) {
    auto it = state.bdf_of_module.find(module);
    if (it == state.bdf_of_module.end()) {
      out.missing_reason = "GPU module " + std::to_string(module) + " of partition " +
                           std::to_string(partition.id) + " has no BDF in the module mapping";
      out.bdfs.clear();
      return out;
    }
    out.bdfs.push_back(it->second);
  }
  return out;
}

std::optional<PartitionId> PartitionWithExactDevices(const State& state,
                                                     const std::vector<Bdf>& devices) {
  std::set<ModuleId> wanted;
  for (const Bdf& device : devices) {
    auto it = state.module_of_bdf.find(GpuOf(state, device));
    if (it == state.module_of_bdf.end()) return std::nullopt;
    wanted.insert(it->second);
  }
  if (wanted.size() != devices.size()) return std::nullopt;
  for (const auto& [id, partition] : state.partitions) {
    if (partition.physical_ids.size() != wanted.size()) continue;
    std::set<ModuleId> have(partition.physical_ids.begin(), partition.physical_ids.end());
    if (have == wanted) return id;
  }
  return std::nullopt;
}

std::vector<PartitionId> ActivePartitionsOverlapping(const State& state,
                                                     const std::set<Bdf>& devices) {
  // The module mapping is one-to-one (Apply refuses any other, CheckModuleMapping says so), so a
  // partition module's BDF is one of these GPUs exactly when the module is one of theirs: the
  // scan below compares module numbers, not BDF strings (it runs on every activation replayed).
  std::vector<ModuleId> modules;
  for (const Bdf& device : devices) {
    auto module = state.module_of_bdf.find(GpuOf(state, device));
    if (module != state.module_of_bdf.end()) modules.push_back(module->second);
  }
  const auto is_one_of_them = [&](ModuleId m) {
    return std::find(modules.begin(), modules.end(), m) != modules.end();
  };
  std::vector<PartitionId> out;
  if (modules.empty()) return out;
  for (const auto& [id, active] : state.active) {
    auto partition = state.partitions.find(id);
    if (partition == state.partitions.end()) continue;
    const auto& ids = partition->second.physical_ids;
    if (std::any_of(ids.begin(), ids.end(), is_one_of_them)) out.push_back(id);
  }
  return out;
}

}  // namespace gfp::sm
