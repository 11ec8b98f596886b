// What the PodResources API says a container holds, flattened into plain values so that callers
// (reconciliation, the journal) never touch protobuf types.
#pragma once

#include <string>
#include <vector>

namespace v1 {
class ListPodResourcesResponse;
}  // namespace v1

namespace gfp::adapters::kubelet {

// Devices of one resource held by one container of one pod.
struct ContainerDeviceAssignment {
  std::string pod_namespace;
  std::string pod_name;
  std::string container_name;
  std::string resource_name;
  std::vector<std::string> device_ids;  // unique, in the order the kubelet first listed them

  friend bool operator==(const ContainerDeviceAssignment&,
                         const ContainerDeviceAssignment&) = default;
};

// One assignment per (pod, container, resource). The kubelet sends one ContainerDevices entry
// per (device, NUMA node), so a device may appear several times: they are merged and de-duplicated.
// Containers without devices produce no assignment.
std::vector<ContainerDeviceAssignment> FlattenPodResources(
    const v1::ListPodResourcesResponse& response);

}  // namespace gfp::adapters::kubelet
