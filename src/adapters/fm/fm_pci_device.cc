#include "adapters/fm/fm_pci_device.h"

#include <cstdio>
#include <string>

#include "adapters/fm/fm_call_error.h"
#include "adapters/host/bdf.h"

namespace gfp::adapters::fm {

Result<abi::PciDevice> ParsePciDevice(std::string_view bdf) {
  GFP_ASSIGN_OR_RETURN(std::string canonical, adapters::host::NormalizeBdf(bdf));
  // Canonical text is "<hex domain>:<2 hex>:<2 hex>.<0-7>", so this cannot fail.
  abi::PciDevice device{};
  if (std::sscanf(canonical.c_str(), "%x:%x:%x.%x", &device.domain, &device.bus, &device.device,
                  &device.function) != 4) {
    return Internal("cannot split PCI address " + canonical);
  }
  return device;
}

std::string PciDeviceName(const abi::PciDevice& device) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04x:%02x:%02x.%x", device.domain, device.bus,
                device.device, device.function);
  return buffer;
}

FmResult<VfActivation> PrepareVfActivation(std::uint32_t partition_id,
                                           std::span<const std::string> vf_bdfs) {
  const std::string call = "fmActivateFabricPartitionWithVFs(" + std::to_string(partition_id);
  auto refuse = [&](const std::string& why) -> FmError {
    return MakeError(call + ")", abi::kBadParam, "not sent: " + why, false);
  };
  if (vf_bdfs.empty()) return refuse("the VF list is empty");
  if (vf_bdfs.size() > abi::kMaxNumGpus) {
    return refuse(std::to_string(vf_bdfs.size()) + " VFs exceed the maximum " +
                  std::to_string(abi::kMaxNumGpus) + " (one per GPU)");
  }
  VfActivation out;
  out.what = call + ", [";
  for (const std::string& bdf : vf_bdfs) {
    auto device = ParsePciDevice(bdf);
    if (!device.ok()) return refuse(device.status().message());
    out.vfs.push_back(*device);
    out.what += (out.vfs.size() == 1 ? "" : ",") + PciDeviceName(*device);
  }
  out.what += "])";
  return out;
}

}  // namespace gfp::adapters::fm
