// `gpu-fabric-plugin serve [flags]` (SPEC §2.1): the node daemon.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/serve_config.h"

namespace gfp::cli {

void AddServeCommand(CLI::App& app, int* exit_code);

// What `serve ARGS` would run with (ARGS without "serve"): the same flags, environment and
// start-up checks, nothing started. For worlds that run the core in-process from the command
// line a real `serve` would get (sim/world), so both are configured by one function.
Result<plugin::ServeConfig> ParseServeArgs(const std::vector<std::string>& args);

}  // namespace gfp::cli
