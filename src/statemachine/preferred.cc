#include "statemachine/preferred.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "statemachine/preferred_checks.h"

namespace gfp::sm {

Result<std::vector<std::string>> PreferredAllocation(const State& state,
                                                     const PreferredRequest& request) {
  // mdev vGPUs have no partitions: NUMA, as without Fabric Manager.
  const bool by_partition = state.fm_enabled && !AnyMdev(state, request.available) &&
                            !AnyMdev(state, request.must_include);
  return by_partition ? PreferredByPartition(state, request) : PreferredByNuma(state, request);
}

Result<std::vector<std::string>> PreferredByNuma(const State& state,
                                                 const PreferredRequest& request) {
  auto numa_of = [&](const std::string& id) {
    auto it = state.devices.find(id);
    return it == state.devices.end() ? -1 : it->second.numa_node;
  };
  // 2. Available devices per NUMA node, in first-seen node order and kubelet order within.
  std::vector<int> node_order;
  std::map<int, std::vector<std::string>> per_node;
  for (const auto& id : request.available) {
    const int node = numa_of(id);
    if (!per_node.count(node)) node_order.push_back(node);
    per_node[node].push_back(id);
  }
  // 3. Must-include devices first, even when not available.
  std::vector<std::string> preferred;
  std::unordered_set<std::string> chosen;
  std::vector<int> selected_node_order;
  std::map<int, std::size_t> selected_per_node;
  for (const auto& id : request.must_include) {
    if (!chosen.insert(id).second) continue;
    preferred.push_back(id);
    const int node = numa_of(id);
    if (!selected_per_node.count(node)) selected_node_order.push_back(node);
    selected_per_node[node]++;
  }
  // 4.
  if (preferred.size() > request.size) return TooManyMustInclude(preferred.size(), request.size);
  // 5. The first node (already-selected nodes first) that can complete the request alone.
  if (preferred.size() < request.size) {
    std::vector<int> candidates = selected_node_order;
    for (int node : node_order) {
      if (std::find(candidates.begin(), candidates.end(), node) == candidates.end()) {
        candidates.push_back(node);
      }
    }
    int picked = -1;
    for (int node : candidates) {
      std::size_t free_here = 0;
      for (const auto& id : per_node[node]) free_here += chosen.count(id) ? 0 : 1;
      if (selected_per_node[node] + free_here >= request.size) {
        picked = node;
        break;
      }
    }
    if (picked != -1) {  // the Go plugin uses -1 as "none", so a -1 node is never picked
      for (const auto& id : per_node[picked]) {
        if (preferred.size() >= request.size) break;
        if (chosen.insert(id).second) preferred.push_back(id);
      }
    }
  }
  // 6. Fill from the available devices in kubelet order.
  for (const auto& id : request.available) {
    if (preferred.size() >= request.size) break;
    if (chosen.insert(id).second) preferred.push_back(id);
  }
  return preferred;
}

}  // namespace gfp::sm
