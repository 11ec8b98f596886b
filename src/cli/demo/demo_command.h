// `gpu-fabric-plugin demo` (SPEC §2.3): a simulated HGX H100 node's day, end to end.
#pragma once

#include <CLI/CLI.hpp>

namespace gfp::cli {

void AddDemoCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
