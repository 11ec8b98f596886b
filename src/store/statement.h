// A prepared statement owned by RAII. The store binds and steps through the C API directly:
// the hot paths (append, replay) then cost no exceptions and no per-column wrapper objects, and
// SQLiteCpp 3.2 does not expose the handle of its own Statement.
#pragma once

#include <filesystem>
#include <string_view>
#include <utility>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gfp::store {

class PreparedStatement {
 public:
  // `persistent` hints SQLite that the statement is kept and reused for the journal's lifetime.
  static Result<PreparedStatement> Prepare(sqlite3* db, std::string_view sql, bool persistent,
                                           const std::filesystem::path& path);

  PreparedStatement() = default;
  PreparedStatement(PreparedStatement&& other) noexcept
      : stmt_(std::exchange(other.stmt_, nullptr)) {}
  PreparedStatement& operator=(PreparedStatement&& other) noexcept;
  PreparedStatement(const PreparedStatement&) = delete;
  PreparedStatement& operator=(const PreparedStatement&) = delete;
  ~PreparedStatement();

  sqlite3_stmt* get() const { return stmt_; }

 private:
  explicit PreparedStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace gfp::store
