#include "statemachine/free_partitions.h"

#include <set>

namespace gfp::sm {

std::map<std::size_t, std::size_t> FreePartitionsBySize(const State& state) {
  std::map<std::size_t, std::size_t> free_by_size;
  if (!state.fm_enabled) return free_by_size;
  // A GPU held by a live allocation (requested, granted or bound), directly or through one of its
  // VFs, is not free, whatever FM says: an active partition without a live owner is cleared when
  // its GPUs are asked for. A GPU can be offered when it is itself a healthy passthrough device or
  // has a healthy VF. mdev vGPUs have no part in partitions and count for neither.
  std::set<Bdf> held;
  std::set<Bdf> offerable;
  for (const auto& [id, allocation] : state.allocations) {
    if (!allocation.live()) continue;
    for (const Bdf& device : allocation.devices) {
      auto known = state.devices.find(device);
      if (known == state.devices.end() || known->second.kind != DeviceKind::kMdev) {
        held.insert(GpuOf(state, device));
      }
    }
  }
  for (const auto& [bdf, device] : state.devices) {
    if (device.healthy && device.kind != DeviceKind::kMdev) offerable.insert(GpuOf(state, bdf));
  }
  for (const auto& [pid, partition] : state.partitions) {
    std::size_t& count = free_by_size[partition.physical_ids.size()];
    if (partition.degraded() || partition.physical_ids.empty()) continue;
    const PartitionDevices devices = DevicesOfPartition(state, partition);
    if (!devices.missing_reason.empty()) continue;
    bool all_free = true;
    for (const Bdf& bdf : devices.bdfs) {
      if (!offerable.count(bdf) || held.count(bdf)) {
        all_free = false;
        break;
      }
    }
    if (all_free) ++count;
  }
  return free_by_size;
}

std::size_t LargestFreePartition(const std::map<std::size_t, std::size_t>& free_by_size) {
  for (auto it = free_by_size.rbegin(); it != free_by_size.rend(); ++it) {
    if (it->second > 0) return it->first;
  }
  return 0;
}

}  // namespace gfp::sm
