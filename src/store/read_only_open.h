// The read-only opening of a journal (Journal::Open with OpenMode::kReadOnly: the file's type,
// the -shm or the immutable fallback, the header and schema checks) on a connection of its own,
// for readers inside src/store/ that need the SQLite handle (journal_image.cc). Internal.
#pragma once

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <memory>

#include "common/status.h"

namespace gfp::store {

struct ReadOnlyConnection {
  std::unique_ptr<SQLite::Database> db;
  int schema_version = 0;
  bool immutable = false;  // opened immutable: read-only directory or media, changes not seen
};

// May throw SQLiteCpp exceptions: callers in src/store/ catch them.
Result<ReadOnlyConnection> OpenReadOnlyConnection(const std::filesystem::path& path);

}  // namespace gfp::store
