#include "statemachine/offered_partitions.h"

#include <algorithm>
#include <set>

namespace gfp::sm {

OfferedPartitions OfferPartitions(const std::map<PartitionId, PartitionState>& table) {
  OfferedPartitions offer;
  std::map<std::size_t, std::set<ModuleId>> taken;  // per size, the GPUs of offered partitions
  for (const auto& [id, partition] : table) {       // a std::map: id order
    if (partition.degraded() || partition.physical_ids.empty()) continue;
    const std::size_t size = partition.physical_ids.size();
    std::set<ModuleId>& used = taken[size];
    const bool overlaps = std::any_of(partition.physical_ids.begin(), partition.physical_ids.end(),
                                      [&](ModuleId module) { return used.count(module) != 0; });
    if (overlaps) {
      offer.left_out[size].push_back(id);
      continue;
    }
    offer.offered[size].push_back(id);
    for (ModuleId module : partition.physical_ids) {
      used.insert(module);
      offer.of_module[module][size] = id;
    }
  }
  return offer;
}

}  // namespace gfp::sm
