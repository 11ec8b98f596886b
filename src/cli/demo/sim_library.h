// Where `gpu-fabric-plugin demo` finds the simulated Fabric Manager library (libnvfm-sim.so):
// in a build tree, in an installed package (/usr/lib/gpu-fabric-plugin/), or where it was built.
#pragma once

#include <filesystem>
#include <vector>

#include "common/status.h"

namespace gfp::cli {

// The places looked at, in order, for a binary at `self_executable` built with the library at
// `built_at`. Empty paths are skipped.
std::vector<std::filesystem::path> SimLibraryCandidates(
    const std::filesystem::path& self_executable, const std::filesystem::path& built_at);

// `flag` when given (--fm-library), else the first candidate that exists; NotFound names every
// place looked at.
Result<std::filesystem::path> FindSimLibrary(const std::filesystem::path& flag,
                                             const std::filesystem::path& self_executable,
                                             const std::filesystem::path& built_at);

}  // namespace gfp::cli
