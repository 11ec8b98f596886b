// RAII transactions on a raw connection. Errors in the middle of an append (disk full, I/O
// error) may or may not make SQLite roll back by itself; the guard always ends an unfinished
// transaction with ROLLBACK so the connection is usable again and nothing half-written stays.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;

namespace gfp::store {

class Transaction {
 public:
  enum class Kind { kRead, kWrite };

  // kWrite takes the write lock at once (BEGIN IMMEDIATE); kRead pins one consistent view (BEGIN).
  static Result<Transaction> Begin(sqlite3* db, Kind kind, std::string_view operation,
                                   const std::filesystem::path& path);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();  // ROLLBACK unless committed

  Status Commit();

 private:
  Transaction(sqlite3* db, std::string_view operation, const std::filesystem::path& path)
      : db_(db), operation_(operation), path_(path) {}
  sqlite3* db_;
  std::string operation_;
  std::filesystem::path path_;
};

}  // namespace gfp::store
