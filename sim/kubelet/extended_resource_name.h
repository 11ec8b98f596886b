// The kubelet's check of a device plugin's resource name at registration
// (k8s.io/kubernetes pkg/apis/core/v1/helper IsExtendedResourceName).
#pragma once

#include <string_view>

namespace gfp::kubelet {

// True for names like "nvidia.com/GH100_H100_SXM5_80GB": "<DNS subdomain>/<qualified name>",
// not in the kubernetes.io domain and not starting with "requests.".
bool IsExtendedResourceName(std::string_view name);

}  // namespace gfp::kubelet
