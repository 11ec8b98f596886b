// The journal is an audit record: only its owner may read it. These helpers create what is
// missing with private modes regardless of the process umask.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace gfp::store {

// Creates `dir` and any missing parents with mode 0700. Existing directories are left alone.
Status EnsurePrivateDirectory(const std::filesystem::path& dir);

// Sets mode 0600 on `file` if it exists (used for SQLite's -wal and -shm companions).
Status RestrictIfExists(const std::filesystem::path& file);

}  // namespace gfp::store
