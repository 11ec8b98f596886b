// `gpu-fabric-plugin serve [flags]` (SPEC §2.1): the node daemon.
#pragma once

#include <CLI/CLI.hpp>

namespace gfp::cli {

void AddServeCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
