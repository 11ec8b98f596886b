// VF addresses for fmActivateFabricPartitionWithVFs: a BDF string in any spelling NormalizeBdf
// accepts ("0000:41:00.4", "00000000:41:00.4") to the SDK's fmPciDevice_t.
#pragma once

#include <string>
#include <string_view>

#include "adapters/fm/fm_abi.h"
#include "common/status.h"

namespace gfp::fm {

// InvalidArgument naming the (escaped) text when it is not a PCI address.
Result<abi::PciDevice> ParsePciDevice(std::string_view bdf);

// The canonical (sysfs) spelling, "0000:41:00.4", for messages.
std::string PciDeviceName(const abi::PciDevice& device);

}  // namespace gfp::fm
