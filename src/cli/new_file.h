// Writing a file that must not exist yet, all or nothing (`journal copy --to FILE`).
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

#include "common/status.h"

namespace gfp::cli {

// Writes `bytes` to a new file at `path` (mode 0600): first to a hidden temporary name in the
// same folder (created exclusively, never through a symlink), fsynced, then renamed onto `path`
// without replacing anything, and the folder fsynced. Nothing at `path` is ever replaced or
// followed: a file, symlink (also a dangling one), FIFO or folder there is refused before
// anything is written. A failure removes the temporary file, so `path` is either the whole copy
// or absent.
//   AlreadyExists: something is at `path`; InvalidArgument: no folder to create it in, or the
//   name is not a file name; other codes: writing, syncing or renaming failed (the reason named).
Status WriteNewFile(const std::filesystem::path& path, std::span<const unsigned char> bytes);

// The same refusal, checked up front (before the bytes are made): AlreadyExists when anything is
// at `path`, a symlink not followed.
Status RefuseExisting(const std::filesystem::path& path);

}  // namespace gfp::cli
