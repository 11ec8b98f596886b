// gpu-fabric-plugin-demo: the demo program `gpu-fabric-plugin demo` execs (it passes
// --plugin-binary, itself). Installed in the package's private folder, not on PATH.
#include <CLI/CLI.hpp>
#include <iostream>

#include "sim/demo/demo_command.h"

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin demo: a simulated HGX H100 node's day"};
  gfp::simdemo::DemoFlags flags;
  app.add_option("--dir", flags.dir, "where to build the simulated world (kept)");
  app.add_option("--fm-library", flags.fm_library, "the simulated libnvfm to load");
  app.add_option("--mode", flags.mode, "device-plugin (the default) or dra: serve --mode=dra's day")
      ->check(CLI::IsMember({"device-plugin", "dra"}));
  app.add_flag("--keep", flags.keep, "keep the temporary world afterwards");
  app.add_option("--plugin-binary", flags.plugin_binary, "the gpu-fabric-plugin to run serve from")
      ->required();
  CLI11_PARSE(app, argc, argv);
  return gfp::simdemo::RunDemo(flags);
}
