// Small, exception-free file-system reads shared by the host adapters. Failures carry only the
// OS reason ("No such file or directory"); callers add which file and which step it was.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::adapters {

// NotFound for ENOENT/ENOTDIR, Internal otherwise; message = the OS description of `err`.
Status ErrnoStatus(int err);

// Reads a whole file; a file longer than `max_bytes` is a ResourceExhausted error rather than
// being silently cut (a truncated JSON or pci.ids would otherwise parse as something else).
Result<std::string> ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes);

// The last path component of a symlink's target, e.g. "vfio-pci" for
// "../../../bus/pci/drivers/vfio-pci". Fails when `path` is not a symlink.
Result<std::string> ReadLinkBasename(const std::filesystem::path& path);

// Entry names of a directory, sorted, without "." and "..".
Result<std::vector<std::string>> ListDirectory(const std::filesystem::path& path);

// Does anything (file, dir, device node, dangling symlink excluded) exist at `path`?
// ENOENT/ENOTDIR -> false; any other stat error is returned.
Result<bool> PathExists(const std::filesystem::path& path);

}  // namespace gfp::adapters
