#include "plugin/dra_mode/claim_facts.h"

#include "adapters/host/allocation_device_specs.h"
#include "plugin/dra/resource_slice.h"

namespace gfp::plugin::dra_mode {

std::map<std::string, std::string> DeviceNamesOfNode(const core::NodeInventory& inventory) {
  std::map<std::string, std::string> out;
  for (const auto& resource : inventory.resources) {
    if (resource.kind != sm::DeviceKind::kPciPassthrough) continue;
    for (const auto& device : resource.devices) out.emplace(dra::DeviceName(device.id), device.id);
  }
  return out;
}

Result<dra::PreparedClaim> PreparedClaimOf(const sm::Claim& claim,
                                           const std::vector<sm::Bdf>& devices,
                                           const DraSettings& settings,
                                           const core::NodeInventory& inventory, bool iommufd) {
  if (claim.requests.size() != devices.size()) {
    return Internal("claim " + claim.namespace_name + "/" + claim.name + " holds " +
                    std::to_string(devices.size()) + " GPUs for " +
                    std::to_string(claim.requests.size()) + " requests");
  }
  dra::PreparedClaim out{settings.driver, settings.node,        claim.uid, claim.namespace_name,
                         claim.name,      claim.pod_claim_name, {}};
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const std::string& bdf = devices[i];
    GFP_ASSIGN_OR_RETURN(auto specs, adapters::host::ContainerDeviceSpecs(
                                         inventory.pci_functions, std::span(&bdf, 1), iommufd));
    dra::ClaimGpu gpu{claim.requests[i], bdf, {}};
    for (const auto& spec : specs) gpu.device_nodes.push_back(spec.host_path);
    out.gpus.push_back(std::move(gpu));
  }
  return out;
}

}  // namespace gfp::plugin::dra_mode
