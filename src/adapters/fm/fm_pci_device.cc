#include "adapters/fm/fm_pci_device.h"

#include <cstdio>
#include <string>

#include "adapters/host/bdf.h"

namespace gfp::fm {

Result<abi::PciDevice> ParsePciDevice(std::string_view bdf) {
  GFP_ASSIGN_OR_RETURN(std::string canonical, adapters::NormalizeBdf(bdf));
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

}  // namespace gfp::fm
