// Names derived from a device id for kubelet and KubeVirt, identical to the Go plugin's:
// resource "nvidia.com/<NAME>", socket "kubevirt-<NAME>.sock", env
// "PCI_RESOURCE_NVIDIA_COM_<NAME>" (what KubeVirt reads to find the BDFs). Pure string code: the
// names come from pci.ids (adapters/host/pci_ids.h, NameResource) or from sysfs (vGPU types).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gfp::adapters::kubelet_naming {

struct ResourceNaming {
  std::string device_id;      // "2330"
  std::string suffix;         // "GH100_H100_SXM5_80GB", or "2330" when pci.ids has no name
  std::string resource_name;  // "nvidia.com/GH100_H100_SXM5_80GB"
  std::string socket_name;    // "kubevirt-GH100_H100_SXM5_80GB.sock"
  std::string env_key;        // "PCI_RESOURCE_NVIDIA_COM_GH100_H100_SXM5_80GB"
  bool named_by_pci_ids = false;
};

std::string ResourceName(std::string_view suffix);
std::string PluginSocketName(std::string_view suffix);
// Upper-cases the suffix, as Go does (matters only for a raw device id such as "20b5").
std::string AllocationEnvKey(std::string_view suffix);

// A whole GPU's names: its pci.ids name (sanitized) when it has one, else its raw device id.
ResourceNaming NameWholeGpu(std::string_view device_id, const std::optional<std::string>& pci_name);

}  // namespace gfp::adapters::kubelet_naming
