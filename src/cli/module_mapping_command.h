// `gpu-fabric-plugin module-mapping generate|check` (SPEC §2.3a, §10): makes and checks the
// BDF -> GPU module id file of §4.2. Exit codes: 0 ok, 1 problems, 2 input cannot be read.
#pragma once

#include <CLI/CLI.hpp>

namespace gfp::cli {

void AddModuleMappingCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
