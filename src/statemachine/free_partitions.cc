#include "statemachine/free_partitions.h"

#include <set>

namespace gfp::sm {

std::map<std::size_t, std::size_t> FreePartitionsBySize(const State& state) {
  std::map<std::size_t, std::size_t> free_by_size;
  if (!state.fm_enabled) return free_by_size;
  // A GPU held by a live allocation (requested, granted or bound) is not free, whatever FM says:
  // an active partition without a live owner is cleared when its GPUs are asked for.
  std::set<Bdf> held;
  for (const auto& [id, allocation] : state.allocations) {
    if (allocation.live()) held.insert(allocation.devices.begin(), allocation.devices.end());
  }
  for (const auto& [pid, partition] : state.partitions) {
    std::size_t& count = free_by_size[partition.physical_ids.size()];
    if (partition.degraded() || partition.physical_ids.empty()) continue;
    const PartitionDevices devices = DevicesOfPartition(state, partition);
    if (!devices.missing_reason.empty()) continue;
    bool all_free = true;
    for (const Bdf& bdf : devices.bdfs) {
      auto device = state.devices.find(bdf);
      if (device == state.devices.end() || !device->second.healthy || held.count(bdf)) {
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
