// Parsing of flag values shared by the subcommands.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::cli {

// 1/0, true/false, t/f in any case (SPEC §2.1); "" (a bare flag) is true.
Result<bool> ParseBoolFlag(const std::string& name, const std::string& value);

// A whole number with a unit: ms, s, m or h ("5s", "250ms", "2m"), at most `maximum`. A count
// too large to multiply out is above the maximum too, never a wrapped-around negative.
Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& name,
                                                    const std::string& value,
                                                    std::chrono::milliseconds maximum);

// Finds `--name=` and `--name ""` in a command line (argv without the program name). CLI11 takes
// the argument after `--name=` as its value (`--journal= --sysfs-root=/x` would journal to
// "--sysfs-root=/x"), so an empty value must be refused before parsing. Nothing after "--".
Status CheckNoEmptyValues(const std::vector<std::string>& args);

// The environment variable `env` of flag `name` is set but empty: an error (a templated manifest
// that expands an empty variable must fail loudly, not fall back to the default).
Status CheckEnvironmentValueNotEmpty(const std::string& name, const std::string& env);

}  // namespace gfp::cli
