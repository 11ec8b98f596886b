#include "sim/kubelet/pod_resources_builder.h"

namespace gfp::kubelet {

void AppendContainerDevices(const std::string& resource_name,
                            const std::vector<HeldDevice>& devices,
                            google::protobuf::RepeatedPtrField<v1::ContainerDevices>* out) {
  for (const HeldDevice& device : devices) {
    if (device.numa_nodes.empty()) {
      v1::ContainerDevices* entry = out->Add();
      entry->set_resource_name(resource_name);
      entry->add_device_ids(device.id);
      continue;
    }
    for (int64_t node : device.numa_nodes) {
      v1::ContainerDevices* entry = out->Add();
      entry->set_resource_name(resource_name);
      entry->add_device_ids(device.id);
      entry->mutable_topology()->add_nodes()->set_id(node);
    }
  }
}

v1::PodResources BuildPodResources(const std::string& pod_namespace, const std::string& pod_name,
                                   const std::vector<HeldContainer>& containers) {
  v1::PodResources pod;
  pod.set_namespace_(pod_namespace);
  pod.set_name(pod_name);
  for (const HeldContainer& held : containers) {
    v1::ContainerResources* container = pod.add_containers();
    container->set_name(held.name);
    AppendContainerDevices(held.resource_name, held.devices, container->mutable_devices());
  }
  return pod;
}

}  // namespace gfp::kubelet
