// The journal is an audit record: only its owner may read it. These helpers create what is
// missing with private modes regardless of the process umask.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace gfp::store {

// Creates `dir` and any missing parents with mode 0700. Existing directories are left alone.
Status EnsurePrivateDirectory(const std::filesystem::path& dir);

// Creates `file` (mode 0600) if missing, and sets mode 0600 on an existing one. Refuses a
// symbolic link or anything that is not a regular file.
Status EnsurePrivateFile(const std::filesystem::path& file);

// Sets mode 0600 on `file` if it exists (used for SQLite's -wal and -shm companions).
Status RestrictIfExists(const std::filesystem::path& file);

}  // namespace gfp::store
