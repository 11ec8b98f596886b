#include "statemachine/release_tracker.h"

#include <set>

namespace gfp::sm {

ReleaseTracker::Due ReleaseTracker::Observe(const State& state,
                                            const std::vector<PodContainerDevices>& containers,
                                            Micros now) {
  std::set<std::pair<std::string, std::string>> in_use;  // (resource, device)
  for (const auto& c : containers) {
    for (const auto& d : c.device_ids) in_use.emplace(c.resource, d);
  }
  Due due;
  held_.clear();
  std::map<AllocationId, Micros> still_absent;
  for (const auto& [id, a] : state.allocations) {
    if (a.status != AllocationStatus::kGranted && a.status != AllocationStatus::kBound) continue;
    if (a.claim) continue;  // a DRA claim ends by its unprepare, not by PodResources
    bool held = false;
    for (const auto& d : a.devices) held |= in_use.count({a.resource, d}) > 0;
    if (held) {
      held_.push_back(id);
      continue;
    }
    auto it = absent_since_.find(id);
    if (it == absent_since_.end()) due.newly_absent.push_back(id);
    const Micros since = it == absent_since_.end() ? std::max(now, a.granted_at) : it->second;
    still_absent[id] = since;
    if (now - since >= state.release_grace) due.allocations.push_back(id);
  }
  absent_since_ = std::move(still_absent);

  std::map<PartitionId, Micros> orphans_absent;
  for (const auto& [pid, active] : state.active) {
    if (!active.owner.empty() || state.intents.count(pid)) continue;
    auto partition = state.partitions.find(pid);
    bool held = false;
    if (partition != state.partitions.end()) {
      for (const Bdf& gpu : DevicesOfPartition(state, partition->second).bdfs) {
        auto device = state.devices.find(gpu);
        if (device != state.devices.end()) held |= in_use.count({device->second.resource, gpu}) > 0;
      }
    }
    if (held) continue;
    auto it = orphan_absent_since_.find(pid);
    const Micros since = it == orphan_absent_since_.end() ? now : it->second;
    orphans_absent[pid] = since;
    if (now - since >= state.release_grace) due.orphan_partitions.push_back(pid);
  }
  orphan_absent_since_ = std::move(orphans_absent);
  return due;
}

}  // namespace gfp::sm
