#include "cli/private_files.h"

#include <string>

#include "common/text_escape.h"

namespace gfp::cli {

std::vector<std::filesystem::path> PrivateFileCandidates(
    const PrivateFile& file, const std::filesystem::path& self_executable) {
  std::vector<std::filesystem::path> candidates;
  if (!self_executable.empty()) {
    const auto bin = self_executable.parent_path();
    // A build tree first, then the package's private folder under the binary's install prefix
    // (<prefix>/bin/../lib/...): an installed binary never picks a build tree's file while its
    // own is there.
    if (!file.build_subdir.empty()) candidates.push_back(bin / file.build_subdir / file.name);
    candidates.push_back(bin / file.name);
    candidates.push_back((bin / ".." / "lib" / "gpu-fabric-plugin" / file.name).lexically_normal());
  }
  return candidates;
}

Result<std::filesystem::path> FindPrivateFile(const PrivateFile& file,
                                              const std::filesystem::path& flag_value,
                                              const std::filesystem::path& self_executable) {
  if (!flag_value.empty()) return flag_value;
  std::string looked_at;
  for (const auto& candidate : PrivateFileCandidates(file, self_executable)) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    looked_at += (looked_at.empty() ? "" : ", ") + EscapeControl(candidate.string());
  }
  std::string how = "install the gpu-fabric-plugin package";
  if (!file.flag.empty()) how = "pass " + std::string(file.flag) + " PATH or " + how;
  return NotFound(std::string(file.not_found) + looked_at + "; " + how);
}

}  // namespace gfp::cli
