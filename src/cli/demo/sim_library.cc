#include "cli/demo/sim_library.h"

#include <string>

#include "common/text_escape.h"

namespace gfp::cli {
namespace {

constexpr char kLibraryName[] = "libnvfm-sim.so";

}  // namespace

std::vector<std::filesystem::path> SimLibraryCandidates(
    const std::filesystem::path& self_executable, const std::filesystem::path& built_at) {
  std::vector<std::filesystem::path> candidates;
  if (!self_executable.empty()) {
    const auto bin = self_executable.parent_path();
    // A build tree first (build/gpu-fabric-plugin beside build/sim/fm/), then the package's
    // private library folder under the binary's install prefix (<prefix>/bin/../lib/...): an
    // installed binary never picks a build tree's library while its own is there.
    candidates.push_back(bin / "sim" / "fm" / kLibraryName);
    candidates.push_back(
        (bin / ".." / "lib" / "gpu-fabric-plugin" / kLibraryName).lexically_normal());
  }
  if (!built_at.empty()) candidates.push_back(built_at);
  return candidates;
}

Result<std::filesystem::path> FindSimLibrary(const std::filesystem::path& flag,
                                             const std::filesystem::path& self_executable,
                                             const std::filesystem::path& built_at) {
  if (!flag.empty()) return flag;
  std::string looked_at;
  for (const auto& candidate : SimLibraryCandidates(self_executable, built_at)) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    looked_at += (looked_at.empty() ? "" : ", ") + EscapeControl(candidate.string());
  }
  return NotFound("no simulated Fabric Manager library (libnvfm-sim.so) found; looked at: " +
                  looked_at + "; pass --fm-library PATH or install the gpu-fabric-plugin package");
}

}  // namespace gfp::cli
