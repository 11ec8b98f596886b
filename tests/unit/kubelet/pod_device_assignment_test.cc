#include "adapters/kubelet/pod_device_assignment.h"

#include <gtest/gtest.h>

#include "podresources/v1/api.pb.h"
#include "sim/kubelet/pod_resources_builder.h"

namespace gfp::kubelet {
namespace {

TEST(KubeletPodDeviceAssignment, MergesPerNumaEntriesAndSeparatesResources) {
  v1::ListPodResourcesResponse response;
  // A device on two NUMA nodes appears twice, as the kubelet sends it.
  *response.add_pod_resources() = BuildPodResources(
      "vms", "vm-a",
      {{"compute", "nvidia.com/GPU", {{"0000:1b:00.0", {0}}, {"0000:3b:00.0", {0, 1}}}},
       {"sidecar", "", {}}});
  v1::ContainerResources* compute = response.mutable_pod_resources(0)->mutable_containers(0);
  AppendContainerDevices("example.com/nic", {{"nic0", {}}}, compute->mutable_devices());
  *response.add_pod_resources() =
      BuildPodResources("vms", "vm-b", {{"compute", "nvidia.com/GPU", {{"0000:5b:00.0", {}}}}});

  const std::vector<adapters::kubelet::ContainerDeviceAssignment> expected = {
      {"vms", "vm-a", "compute", "nvidia.com/GPU", {"0000:1b:00.0", "0000:3b:00.0"}},
      {"vms", "vm-a", "compute", "example.com/nic", {"nic0"}},
      {"vms", "vm-b", "compute", "nvidia.com/GPU", {"0000:5b:00.0"}},
  };
  EXPECT_EQ(adapters::kubelet::FlattenPodResources(response), expected);
}

TEST(KubeletPodDeviceAssignment, EmptyResponseGivesNothing) {
  EXPECT_TRUE(adapters::kubelet::FlattenPodResources(v1::ListPodResourcesResponse()).empty());
}

}  // namespace
}  // namespace gfp::kubelet
