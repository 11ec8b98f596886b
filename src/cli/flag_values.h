// Parsing of flag values shared by the subcommands.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"

namespace gfp::cli {

// 1/0, true/false, t/f in any case (SPEC §2.1); "" (a bare flag) is true.
Result<bool> ParseBoolFlag(const std::string& name, const std::string& value);

// A whole number with a unit: ms, s, m or h ("5s", "250ms", "2m").
Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& name,
                                                    const std::string& value);

}  // namespace gfp::cli
