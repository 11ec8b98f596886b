#include "store/migrations.h"

#include <sqlite3.h>

#include <string>

#include "store/sqlite_status.h"

namespace gfp::store {
namespace {

std::string FileName(const Migration& m) {
  std::string number = std::to_string(m.version);
  if (number.size() < 4) number.insert(0, 4 - number.size(), '0');
  return number + "_" + std::string(m.name) + ".sql";
}

// Rolls back a migration transaction that did not reach COMMIT.
class RollbackUnlessCommitted {
 public:
  explicit RollbackUnlessCommitted(sqlite3* db) : db_(db) {}
  ~RollbackUnlessCommitted() {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  RollbackUnlessCommitted(const RollbackUnlessCommitted&) = delete;
  RollbackUnlessCommitted& operator=(const RollbackUnlessCommitted&) = delete;

 private:
  sqlite3* db_;
};

}  // namespace

Status ValidateMigrationSequence(std::span<const Migration> migrations) {
  if (migrations.empty()) return Internal("no schema migrations are compiled into this binary");
  int expected = 1;
  for (const Migration& m : migrations) {
    if (m.version != expected) {
      return Internal("schema migration " + FileName(m) + " is out of sequence: expected number " +
                      std::to_string(expected) + " (gap, duplicate or disorder in migrations/)");
    }
    ++expected;
  }
  return Status::Ok();
}

Status ApplyMigrations(sqlite3* db, std::span<const Migration> migrations, int current_version,
                       const std::filesystem::path& path) {
  GFP_RETURN_IF_ERROR(ValidateMigrationSequence(migrations));
  for (const Migration& m : migrations) {
    if (m.version <= current_version) continue;
    const std::string operation = "applying schema migration " + FileName(m);
    RollbackUnlessCommitted guard(db);
    GFP_RETURN_IF_ERROR(ExecSql(db, "BEGIN IMMEDIATE", operation, path));
    const std::string sql(m.sql);
    GFP_RETURN_IF_ERROR(ExecSql(db, sql.c_str(), operation, path));
    // Both pragmas write the database header inside this transaction.
    const std::string stamp = "PRAGMA user_version = " + std::to_string(m.version) +
                              "; PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
    GFP_RETURN_IF_ERROR(ExecSql(db, stamp.c_str(), operation, path));
    GFP_RETURN_IF_ERROR(ExecSql(db, "COMMIT", operation, path));
  }
  return Status::Ok();
}

}  // namespace gfp::store
