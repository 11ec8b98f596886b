// Builds PodResources entries shaped exactly like the kubelet's: one ContainerDevices per
// (device, NUMA node), each carrying a single device ID.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "podresources/v1/api.pb.h"

namespace gfp::kubelet {

struct HeldDevice {
  std::string id;
  std::vector<int64_t> numa_nodes;  // empty: no topology
};

struct HeldContainer {
  std::string name;
  std::string resource_name;
  std::vector<HeldDevice> devices;
};

v1::PodResources BuildPodResources(const std::string& pod_namespace, const std::string& pod_name,
                                   const std::vector<HeldContainer>& containers);

// The ContainerDevices entries the kubelet would emit for `devices` of `resource_name`.
void AppendContainerDevices(const std::string& resource_name,
                            const std::vector<HeldDevice>& devices,
                            google::protobuf::RepeatedPtrField<v1::ContainerDevices>* out);

}  // namespace gfp::kubelet
