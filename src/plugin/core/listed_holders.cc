#include "plugin/core/listed_holders.h"

namespace gfp::plugin::core {

void ListedHolders::Remember(
    const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers,
    sm::Micros listed_at) {
  pod_of_.clear();
  for (const auto& c : containers) {
    for (const auto& id : c.device_ids) {
      pod_of_[{c.resource_name, id}] = c.pod_namespace + "/" + c.pod_name;
    }
  }
  listed_at_ = listed_at;
}

std::vector<ListedHolder> ListedHolders::HoldersOf(const std::string& resource,
                                                   const std::vector<std::string>& devices) const {
  std::map<std::string, std::vector<std::string>> by_pod;
  for (const auto& id : devices) {
    auto it = pod_of_.find({resource, id});
    if (it != pod_of_.end()) by_pod[it->second].push_back(id);
  }
  std::vector<ListedHolder> out;
  for (auto& [pod, ids] : by_pod) out.push_back({pod, std::move(ids)});
  return out;
}

}  // namespace gfp::plugin::core
