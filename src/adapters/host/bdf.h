// PCI addresses (bus/device/function, "BDF") in the one spelling the kernel uses in sysfs:
// "0000:1b:00.0" (lower-case hex, 4-digit domain). Files written by other tools use other
// spellings (nvidia-smi writes "00000000:1B:00.0"), so everything is normalized on entry.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::host {

// Returns the canonical form of `text`, or InvalidArgument when it is not shaped like
// DOMAIN:BUS:DEVICE.FUNCTION (domain 1-8 hex digits, bus 2, device 2 up to 1f, function 0-7).
Result<std::string> NormalizeBdf(std::string_view text);

// True when `text` is already canonical (what sysfs directory names look like).
bool IsCanonicalBdf(std::string_view text);

}  // namespace gfp::adapters::host
