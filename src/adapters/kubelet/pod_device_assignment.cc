#include "adapters/kubelet/pod_device_assignment.h"

#include <algorithm>
#include <map>
#include <set>

#include "podresources/v1/api.pb.h"

namespace gfp::adapters::kubelet {

std::vector<ContainerDeviceAssignment> FlattenPodResources(
    const v1::ListPodResourcesResponse& response) {
  std::vector<ContainerDeviceAssignment> out;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      // resource name -> index in `out`, so entries keep the kubelet's order.
      std::map<std::string, size_t> by_resource;
      std::map<std::string, std::set<std::string>> seen;
      for (const v1::ContainerDevices& devices : container.devices()) {
        if (devices.device_ids().empty()) continue;
        auto [it, inserted] = by_resource.try_emplace(devices.resource_name(), out.size());
        if (inserted) {
          out.push_back(
              {pod.namespace_(), pod.name(), container.name(), devices.resource_name(), {}});
        }
        std::set<std::string>& known = seen[devices.resource_name()];
        for (const std::string& id : devices.device_ids()) {
          if (known.insert(id).second) out[it->second].device_ids.push_back(id);
        }
      }
    }
  }
  return out;
}

}  // namespace gfp::adapters::kubelet
