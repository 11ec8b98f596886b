// Where `gpu-fabric-plugin` finds the files it ships beside itself for the demo: the demo program
// (gpu-fabric-plugin-demo) and the simulated Fabric Manager library (libnvfm-sim.so). In a build
// tree they sit beside the binary or in a subfolder (build/sim/fm/); in an installed package in
// its private folder, <prefix>/lib/gpu-fabric-plugin/; the demo program, installed there too,
// finds the library beside itself.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gfp::cli {

struct PrivateFile {
  std::string_view name;          // "libnvfm-sim.so"
  std::string_view build_subdir;  // where a build tree has it, relative to the binary ("sim/fm")
  std::string_view flag;          // the flag that names it instead ("--fm-library"), for messages
  std::string_view not_found;     // the message's start when it is nowhere (docs/packaging.md)
};

// The places looked at, in order, from a binary at `self_executable`: the build tree's subfolder,
// beside the binary, the package's private folder. Only places relative to the binary itself: a
// path baked in at build time would let a copied or installed binary load a build tree's file.
std::vector<std::filesystem::path> PrivateFileCandidates(
    const PrivateFile& file, const std::filesystem::path& self_executable);

// `flag_value` when given, else the first candidate that exists; NotFound names every place
// looked at.
Result<std::filesystem::path> FindPrivateFile(const PrivateFile& file,
                                              const std::filesystem::path& flag_value,
                                              const std::filesystem::path& self_executable);

inline constexpr PrivateFile kSimLibrary{
    "libnvfm-sim.so", "sim/fm", "--fm-library",
    "no simulated Fabric Manager library (libnvfm-sim.so) found; looked at: "};
inline constexpr PrivateFile kDemoProgram{
    "gpu-fabric-plugin-demo", "", "",
    "no demo program (gpu-fabric-plugin-demo) found; looked at: "};

}  // namespace gfp::cli
