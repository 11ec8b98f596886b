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

// Words for extended codes whose SQLite text says little ("unable to open database file",
// "disk I/O error"); empty when SQLite's own text is as good.
std::string ExtendedCodeWords(int code) {
  switch (code) {
    case SQLITE_CANTOPEN_SYMLINK:
      return "the path is a symbolic link, which the journal does not follow";
    case SQLITE_CANTOPEN_ISDIR:
      return "the path is a directory";
    case SQLITE_CANTOPEN_NOTEMPDIR:
      return "no temporary directory is usable";
    case SQLITE_CANTOPEN_FULLPATH:
      return "the full path could not be resolved";
    case SQLITE_CANTOPEN:
      return "the file or its directory cannot be opened (missing, or no permission)";
    case SQLITE_IOERR_READ:
      return "reading failed (is the path a directory, or the disk failing?)";
    case SQLITE_IOERR_SHORT_READ:
      return "the file ended early (truncated?)";
    case SQLITE_IOERR_WRITE:
      return "writing failed";
    case SQLITE_IOERR_FSYNC:
    case SQLITE_IOERR_DIR_FSYNC:
      return "fsync failed: the data may not be on disk";
    case SQLITE_IOERR_SHMOPEN:
    case SQLITE_IOERR_SHMSIZE:
    case SQLITE_IOERR_SHMMAP:
      return "the -shm index beside the journal cannot be created or mapped";
    case SQLITE_READONLY_DIRECTORY:
      return "the directory is read-only";
    case SQLITE_READONLY_CANTINIT:
      return "the -shm index cannot be initialised (read-only directory or media)";
    case SQLITE_READONLY_RECOVERY:
      return "the -wal needs recovery, which a read-only connection cannot do";
    case SQLITE_READONLY:
      return "the file is read-only";
    case SQLITE_PERM:
      return "permission denied";
    default:
      return {};
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
    if (const std::string words = ExtendedCodeWords(code); !words.empty()) {
      message += " (" + words + ")";
    }
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
