#include "store/statement.h"

#include <sqlite3.h>

#include <string>

#include "store/sqlite_status.h"

namespace gfp::store {

Result<PreparedStatement> PreparedStatement::Prepare(sqlite3* db, std::string_view sql,
                                                     bool persistent,
                                                     const std::filesystem::path& path) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(rc, db, "preparing `" + std::string(sql) + "`", path);
  }
  return PreparedStatement(stmt);
}

PreparedStatement& PreparedStatement::operator=(PreparedStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

PreparedStatement::~PreparedStatement() { sqlite3_finalize(stmt_); }

}  // namespace gfp::store
