#include "store/sqlite_status.h"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <string>

namespace gfp::store {
namespace {

ErrorCode CodeFor(int primary) {
  switch (primary) {
    case SQLITE_FULL:
      return ErrorCode::kResourceExhausted;
    case SQLITE_CORRUPT:
      return ErrorCode::kDataLoss;
    case SQLITE_NOTADB:
      return ErrorCode::kInvalidArgument;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorCode::kUnavailable;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return ErrorCode::kFailedPrecondition;
    case SQLITE_TOOBIG:
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return ErrorCode::kInvalidArgument;
    default:
      return ErrorCode::kInternal;
  }
}

Status Build(int code, std::string_view detail, std::string_view operation,
             const std::filesystem::path& path) {
  const int primary = code & 0xff;
  std::string message = "journal " + path.string() + ": " + std::string(operation) + " failed: ";
  if (primary == SQLITE_NOTADB) {
    message += "the file is not an SQLite database";
  } else {
    message += detail.empty() ? std::string(sqlite3_errstr(code)) : std::string(detail);
  }
  message += " (SQLite code " + std::to_string(code) + ")";
  return Status(CodeFor(primary), std::move(message));
}

}  // namespace

Status SqliteStatus(int result_code, sqlite3* db, std::string_view operation,
                    const std::filesystem::path& path) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : nullptr;
  int code = result_code;
  // sqlite3_step returns only the primary code; the extended one says more (e.g. IOERR_FSYNC).
  if (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == (result_code & 0xff)) {
    code = sqlite3_extended_errcode(db);
  }
  return Build(code, detail != nullptr ? detail : "", operation, path);
}

Status StatusFromException(const std::exception& e, std::string_view operation,
                           const std::filesystem::path& path) {
  if (const auto* sq = dynamic_cast<const SQLite::Exception*>(&e)) {
    const int code =
        sq->getExtendedErrorCode() > 0 ? sq->getExtendedErrorCode() : sq->getErrorCode();
    return Build(code, sq->what(), operation, path);
  }
  return Internal("journal " + path.string() + ": " + std::string(operation) +
                  " failed: " + e.what());
}

Status ExecSql(sqlite3* db, const char* sql, std::string_view operation,
               const std::filesystem::path& path) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteStatus(rc, db, operation, path);
  return Status::Ok();
}

}  // namespace gfp::store
