#include "adapters/kubelet_naming/resource_naming.h"

namespace gfp::adapters::kubelet_naming {

std::string ResourceName(std::string_view suffix) { return "nvidia.com/" + std::string(suffix); }

std::string PluginSocketName(std::string_view suffix) {
  return "kubevirt-" + std::string(suffix) + ".sock";
}

std::string AllocationEnvKey(std::string_view suffix) {
  std::string key = "PCI_RESOURCE_NVIDIA_COM_";
  for (char c : suffix) key += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return key;
}

ResourceNaming NameWholeGpu(std::string_view device_id,
                            const std::optional<std::string>& pci_name) {
  ResourceNaming naming;
  naming.device_id = std::string(device_id);
  naming.named_by_pci_ids = pci_name.has_value();
  naming.suffix = pci_name ? *pci_name : naming.device_id;
  naming.resource_name = ResourceName(naming.suffix);
  naming.socket_name = PluginSocketName(naming.suffix);
  naming.env_key = AllocationEnvKey(naming.suffix);
  return naming;
}

}  // namespace gfp::adapters::kubelet_naming
