// Small, exception-free file-system reads shared by the host adapters. Failures carry only the
// OS reason ("No such file or directory"); callers add which file and which step it was.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::host {

// NotFound for ENOENT/ENOTDIR, Internal otherwise; message = the OS description of `err`.
Status ErrnoStatus(int err);

// Reads a whole file; a file longer than `max_bytes` is a ResourceExhausted error rather than
// being silently cut (a truncated JSON or pci.ids would otherwise parse as something else).
// Anything but a regular file (after symlinks) is an InvalidArgument error "not a regular file
// (a FIFO)" found without blocking: the file is opened O_NONBLOCK and checked with fstat, so a
// FIFO never stalls start-up and nothing can be swapped in between the check and the read.
Result<std::string> ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes);

// "a regular file", "a directory", "a FIFO", "a socket", "a character device", "a block device"
// or "an unknown kind of file", for an st_mode.
std::string FileTypeName(unsigned mode);

// Checks, without opening anything, what is at `path` (symlinks followed). Errors:
// NotFound "does not exist", InvalidArgument "is not a regular file (a FIFO)" /
// "is not a directory (a regular file)", Internal "cannot be checked: <reason>".
Status CheckIsRegularFile(const std::filesystem::path& path);
Status CheckIsDirectory(const std::filesystem::path& path);

// The last path component of a symlink's target, e.g. "vfio-pci" for
// "../../../bus/pci/drivers/vfio-pci". Fails when `path` is not a symlink.
Result<std::string> ReadLinkBasename(const std::filesystem::path& path);

// Entry names of a directory, sorted, without "." and "..".
Result<std::vector<std::string>> ListDirectory(const std::filesystem::path& path);

// Does anything (file, dir, device node, dangling symlink excluded) exist at `path`?
// ENOENT/ENOTDIR -> false; any other stat error is returned.
Result<bool> PathExists(const std::filesystem::path& path);

}  // namespace gfp::adapters::host
