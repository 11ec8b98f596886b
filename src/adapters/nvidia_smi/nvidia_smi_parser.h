// Reads GPU module ids out of `nvidia-smi -q` text (SPEC §2.3a, §10). NVML reports a GPU's module
// id only while it is bound to the nvidia driver, so operators capture this text before binding
// the GPUs to vfio-pci and turn it into the §4.2 mapping file.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::nvidia_smi {

// Each "GPU 00000000:1B:00.0" block (header at column 0) must have exactly one first-level
// "Module ID : N" line (any case, e.g. "Module Id") with N a decimal in 1..4294967295. Returns
// canonical BDF -> module id. InvalidArgument, naming `source`, the line and the GPU, for: a NUL
// byte, no GPU block, a header that is not a PCI address, the same GPU twice, a block without a
// Module ID, "N/A" or any non-number, two Module ID lines in a block, a module id used twice.
Result<std::map<std::string, std::uint32_t>> ParseNvidiaSmiModuleIds(std::string_view text,
                                                                     std::string_view source);

// The §4.2 file: {"0000:1b:00.0": "8", ...}, one entry per line, keys sorted, newline at the end.
std::string FormatModuleMappingJson(const std::map<std::string, std::uint32_t>& module_by_bdf);

}  // namespace gfp::adapters::nvidia_smi
