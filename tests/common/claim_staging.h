// What a claim left in the plugin's staging folder (.claim-staging): every entry but the empty
// spare folders the stager makes ahead for the next Prepare (dra::InodeReserve).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace gfp::testing {

inline std::vector<std::string> LeftStaged(const std::filesystem::path& staging) {
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(staging, ec)) {
    const std::string name = entry.path().filename().string();
    const bool spare = name.starts_with("spare.") && entry.is_directory(ec) &&
                       !entry.is_symlink(ec) && std::filesystem::is_empty(entry.path(), ec);
    if (!spare) left.push_back(name);
  }
  std::sort(left.begin(), left.end());
  return left;
}

}  // namespace gfp::testing
