#include "store/transaction.h"

#include <sqlite3.h>

#include <utility>

#include "store/sqlite_status.h"

namespace gfp::store {

Result<Transaction> Transaction::Begin(sqlite3* db, Kind kind, std::string_view operation,
                                       const std::filesystem::path& path) {
  GFP_RETURN_IF_ERROR(
      ExecSql(db, kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN", operation, path));
  return Transaction(db, operation, path);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      operation_(std::move(other.operation_)),
      path_(std::move(other.path_)) {}

Transaction::~Transaction() {
  // A failed COMMIT or statement may already have rolled back; only roll back what is open.
  if (db_ != nullptr && sqlite3_get_autocommit(db_) == 0) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status Transaction::Commit() {
  Status status = ExecSql(db_, "COMMIT", operation_, path_);
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace gfp::store
