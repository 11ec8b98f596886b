// Socket-file chores of the fake kubelet: what the real kubelet does to its device-plugin
// directory on start.
#pragma once

#include <filesystem>
#include <vector>

#include "common/status.h"

namespace gfp::kubelet {

// Removes every Unix socket directly inside `dir` (kubelet CleanupPluginDirectory: directories and
// other files such as the checkpoint stay). Returns the removed paths.
Result<std::vector<std::filesystem::path>> RemoveSocketsIn(const std::filesystem::path& dir);

}  // namespace gfp::kubelet
