// Names of vGPU resources and the env keys KubeVirt reads for them, identical to the Go plugin
// (reference/upstream-behaviour.md §1.4, §1.10, §1.13, §3.2).
#pragma once

#include <string>
#include <string_view>

namespace gfp::adapters::kubelet_naming {

// Go's regexp `\s+` -> "_". RE2's \s is [\t\n\f\r ] only (no \v, no Unicode spaces):
// "GRID A100-4C" -> "GRID_A100-4C", "NVIDIA H100XM-80C" -> "NVIDIA_H100XM-80C".
std::string ReplaceWhitespaceRuns(std::string_view text);

// Can `suffix` follow "nvidia.com/" in a kubelet resource name? Kubernetes' qualified-name rule:
// 1-63 chars of [A-Za-z0-9._-], starting and ending with a letter or digit.
bool IsValidResourceSuffix(std::string_view suffix);

// KubeVirt's ResourceNameToEnvVar: "<prefix>_" + resource name upper-cased with "/" and "."
// turned into "_" (hyphens kept).
std::string ResourceNameToEnvVar(std::string_view prefix, std::string_view resource_name);

// "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C" for type "GRID_A100-4C".
std::string MdevEnvKey(std::string_view type_name);
// "PCI_RESOURCE_NVIDIA_COM_NVIDIA_H100XM-80C" for profile "NVIDIA_H100XM-80C".
std::string VgpuVfEnvKey(std::string_view profile);

}  // namespace gfp::adapters::kubelet_naming
