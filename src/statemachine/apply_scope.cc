#include "statemachine/apply_scope.h"

#include <charconv>

#include "statemachine/apply.h"

namespace gfp::sm {

void ApplyScope::Anomaly(std::string description) {
  s_.anomaly_count++;
  s_.recent_anomalies.push_back({seq_, std::move(description)});
  if (s_.recent_anomalies.size() > State::kMaxRecentAnomalies) {
    s_.recent_anomalies.erase(s_.recent_anomalies.begin());
  }
}

Allocation* ApplyScope::LiveAllocation(const std::string& id, const char* event_name) {
  auto it = s_.allocations.find(id);
  if (it == s_.allocations.end()) {
    Anomaly(std::string(event_name) + " for unknown or finished allocation " + id);
    return nullptr;
  }
  return &it->second;
}

void ApplyScope::Finish(const AllocationId& id) {
  for (auto& [pid, active] : s_.active) {
    if (active.owner == id) active.owner.clear();
  }
  s_.allocations.erase(id);
}

void ApplyScope::NoteAllocationId(std::string_view id) {
  if (!id.starts_with(kAllocationIdPrefix)) return;
  std::uint64_t n = 0;
  id.remove_prefix(kAllocationIdPrefix.size());
  auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
  if (ec == std::errc() && ptr == id.data() + id.size() && n >= s_.next_allocation_number) {
    s_.next_allocation_number = n + 1;
  }
}

}  // namespace gfp::sm
