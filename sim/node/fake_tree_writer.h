// Tiny file-system helpers for the fake node: every failure is a Status naming the path.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gfp::sim {

Status MakeDirectories(const std::filesystem::path& dir);
Status WriteTextFile(const std::filesystem::path& file, const std::string& content);
// Creates (or replaces) `link` pointing at `target` with a relative target, as sysfs does.
Status MakeRelativeSymlink(const std::filesystem::path& target, const std::filesystem::path& link);
Status RemovePath(const std::filesystem::path& path);  // files, links or whole trees

}  // namespace gfp::sim
