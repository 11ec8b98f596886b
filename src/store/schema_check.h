// Decides from the database header whether a file is a journal this binary may open, before
// anything is written to it (so a wrong --journal path never turns someone's database into WAL).
#pragma once

#include <filesystem>

#include "common/status.h"
#include "store/journal_types.h"

struct sqlite3;

namespace gfp::store {

struct DatabaseHeader {
  int application_id = 0;
  int user_version = 0;
  int schema_objects = 0;  // rows in sqlite_schema: a fresh file has none
};

// Reads the header fields; a file that is not SQLite at all fails here with InvalidArgument.
Result<DatabaseHeader> ReadDatabaseHeader(sqlite3* db, const std::filesystem::path& path);

// OK when the file is a journal of a known schema (or, for kReadWrite, a fresh empty file).
Status CheckDatabaseHeader(const DatabaseHeader& header, OpenMode mode, int latest_version,
                           const std::filesystem::path& path);

}  // namespace gfp::store
