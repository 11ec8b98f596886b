// VF addresses for fmActivateFabricPartitionWithVFs: a BDF string in any spelling NormalizeBdf
// accepts ("0000:41:00.4", "00000000:41:00.4") to the SDK's fmPciDevice_t.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/fm/fm_abi.h"
#include "adapters/fm/fm_error.h"
#include "common/status.h"

namespace gfp::adapters::fm {

// InvalidArgument naming the (escaped) text when it is not a PCI address.
Result<abi::PciDevice> ParsePciDevice(std::string_view bdf);

// The canonical (sysfs) spelling, "0000:41:00.4", for messages.
std::string PciDeviceName(const abi::PciDevice& device);

// fmActivateFabricPartitionWithVFs's arguments, checked before anything is sent: the call's name
// for messages ("fmActivateFabricPartitionWithVFs(3, [0000:1b:00.4,...])") and the VFs. An
// empty list, more than kMaxNumGpus VFs or a malformed BDF is FM_ST_BADPARAM, "not sent".
struct VfActivation {
  std::string what;
  std::vector<abi::PciDevice> vfs;
};
FmResult<VfActivation> PrepareVfActivation(std::uint32_t partition_id,
                                           std::span<const std::string> vf_bdfs);

}  // namespace gfp::adapters::fm
