// Turns SQLite failures into gfp::Status values that name the journal, the operation and
// SQLite's own reason. Disk full becomes ResourceExhausted, corruption DataLoss.
#pragma once

#include <exception>
#include <filesystem>
#include <string_view>

#include "common/status.h"

struct sqlite3;

namespace gfp::store {

// From a result code and the connection's current error text (db may be null).
Status SqliteStatus(int result_code, sqlite3* db, std::string_view operation,
                    const std::filesystem::path& path);

// From an exception thrown by SQLiteCpp (or anything else caught at the module boundary).
Status StatusFromException(const std::exception& e, std::string_view operation,
                           const std::filesystem::path& path);

// Runs one or more SQL statements without results, returning a Status instead of throwing.
Status ExecSql(sqlite3* db, const char* sql, std::string_view operation,
               const std::filesystem::path& path);

}  // namespace gfp::store
