// `gpu-fabric-plugin demo` (SPEC §2.3): runs the demo program, gpu-fabric-plugin-demo, which
// lives beside this binary in a build tree and in the package's private folder when installed
// (cli/private_files.h). The product binary links no simulator: the demo's fake node, simulated
// Fabric Manager and fake kubelet are in that program, which runs this binary's `serve`.
#pragma once

#include <CLI/CLI.hpp>

namespace gfp::cli {

void AddDemoCommand(CLI::App& app, int* exit_code);

}  // namespace gfp::cli
