// The demo program behind `gpu-fabric-plugin demo` (SPEC §2.3): a simulated HGX H100 node's day,
// end to end, with `serve` run as a real process (sim/world/process_world.h). It lives outside
// the product binary, which execs it (src/cli/demo_launcher.h), so `serve` carries no simulator.
#pragma once

#include <string>

namespace gfp::simdemo {

struct DemoFlags {
  std::string dir;            // where to build the world (kept); empty: a temporary folder
  std::string fm_library;     // the simulated libnvfm to load; empty: found (cli/private_files.h)
  bool keep = false;          // keep the temporary world afterwards
  std::string plugin_binary;  // the gpu-fabric-plugin whose `serve` runs in the world
  std::string mode = "device-plugin";  // or "dra": the same day with serve --mode=dra
};

// Plays the day and prints the journal it left; 0 when every step behaved.
int RunDemo(const DemoFlags& flags);

}  // namespace gfp::simdemo
