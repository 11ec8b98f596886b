#include "store/schema_check.h"

#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "store/migrations.h"
#include "store/sqlite_status.h"

namespace gfp::store {
namespace {

Result<int> QueryInt(sqlite3* db, const char* sql, const std::filesystem::path& path) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(rc, db, "reading the database header", path);
  }
  rc = sqlite3_step(stmt);
  int value = 0;
  if (rc == SQLITE_ROW) value = sqlite3_column_int(stmt, 0);
  Status status;
  if (rc != SQLITE_ROW) status = SqliteStatus(rc, db, "reading the database header", path);
  sqlite3_finalize(stmt);
  if (!status.ok()) return status;
  return value;
}

std::string Hex32(int v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", static_cast<unsigned>(v));
  return buf;
}

}  // namespace

Result<DatabaseHeader> ReadDatabaseHeader(sqlite3* db, const std::filesystem::path& path) {
  DatabaseHeader h;
  GFP_ASSIGN_OR_RETURN(h.application_id, QueryInt(db, "PRAGMA application_id", path));
  GFP_ASSIGN_OR_RETURN(h.user_version, QueryInt(db, "PRAGMA user_version", path));
  GFP_ASSIGN_OR_RETURN(h.schema_objects, QueryInt(db, "SELECT count(*) FROM sqlite_master", path));
  return h;
}

Status CheckDatabaseHeader(const DatabaseHeader& header, OpenMode mode, int latest_version,
                           const std::filesystem::path& path) {
  const std::string name = path.string();
  const bool fresh =
      header.application_id == 0 && header.user_version == 0 && header.schema_objects == 0;
  if (header.application_id != kApplicationId && !(fresh && mode == OpenMode::kReadWrite)) {
    return InvalidArgument(
        name + " is not a gpu-fabric-plugin journal: its SQLite application_id is " +
        Hex32(header.application_id) + ", expected " + Hex32(kApplicationId) +
        (fresh ? " and it has no tables: if it was copied without its -wal file, "
                 "or the -wal was lost, restore " +
                     name + "-wal beside it"
               : ""));
  }
  if (header.user_version > latest_version) {
    return FailedPrecondition("journal " + name + " has schema version " +
                              std::to_string(header.user_version) +
                              "; this binary supports up to " + std::to_string(latest_version));
  }
  if (header.user_version < 0) {
    return InvalidArgument("journal " + name + " has an invalid schema version " +
                           std::to_string(header.user_version));
  }
  if (header.user_version == 0 && header.schema_objects > 0) {
    // Migration 1 creates the tables: with them already there it cannot run, so `serve` could
    // not migrate this file either.
    return DataLoss("journal " + name + " has " + std::to_string(header.schema_objects) +
                    " schema objects but schema version 0 (its PRAGMA user_version was changed): "
                    "neither serve nor the journal verbs can use it; restore it from backup");
  }
  // A reader reads an older schema as it is (schema 1 lacks only the index, which readers fall
  // back from); a file whose first migration never ran has no tables to read.
  if (mode == OpenMode::kReadOnly && header.user_version == 0) {
    return FailedPrecondition("journal " + name + " has schema version " +
                              std::to_string(header.user_version) + " and needs migrating to " +
                              std::to_string(latest_version) +
                              "; open it read-write once (e.g. start `serve`) to migrate it");
  }
  return Status::Ok();
}

}  // namespace gfp::store
