// How the kubelet turns a plugin's GetPreferredAllocation answer into the devices it allocates
// (k8s.io/kubernetes pkg/kubelet/cm/devicemanager manager.go devicesToAllocate): the answer is
// only advice.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gfp::kubelet {

// Picks `count` devices from `available` (count <= available.size()): first the preferred ones
// that are available (duplicates and unknown IDs ignored, in the answer's order), then the first
// remaining available devices in order to fill any shortfall. `preferred` may be null (no advice).
std::vector<std::string> ChooseDevices(const std::vector<std::string>& available, size_t count,
                                       const std::vector<std::string>* preferred);

}  // namespace gfp::kubelet
