// Opening and closing a journal; accessors. Appends, reads, snapshots and verification live in
// journal_append.cc, journal_read.cc, journal_snapshots.cc and journal_verify.cc.
#include "store/journal.h"

#include <sqlite3.h>

#include <exception>
#include <string>
#include <system_error>

#include "store/file_permissions.h"
#include "store/journal_impl.h"
#include "store/migrations.h"
#include "store/schema_check.h"
#include "store/sqlite_status.h"

namespace gfp::store {
namespace {

// Readers wait this long for a checkpoint or migration in progress instead of failing at once.
constexpr int kBusyTimeoutMs = 5000;

std::filesystem::path WithSuffix(const std::filesystem::path& p, const char* suffix) {
  std::filesystem::path out = p;
  out += suffix;
  return out;
}

Status RestrictCompanionFiles(const std::filesystem::path& path) {
  // SQLite creates -wal/-shm with the database file's mode; this also fixes older files.
  GFP_RETURN_IF_ERROR(RestrictIfExists(WithSuffix(path, "-wal")));
  return RestrictIfExists(WithSuffix(path, "-shm"));
}

// Switches to WAL with full fsync on commit: an outcome must survive power loss before the
// kubelet sees the answer.
Status ConfigureWriter(SQLite::Database& db, const std::filesystem::path& path) {
  const std::string mode = db.execAndGet("PRAGMA journal_mode=WAL").getString();
  if (mode != "wal") {
    return FailedPrecondition("journal " + path.string() +
                              " could not be switched to WAL mode (SQLite kept '" + mode + "')");
  }
  return ExecSql(db.getHandle(), "PRAGMA synchronous=FULL", "setting synchronous=FULL", path);
}

}  // namespace

Journal::Journal(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Journal::~Journal() = default;

Result<std::unique_ptr<Journal>> Journal::Open(const std::filesystem::path& path, OpenMode mode) {
  if (path.empty()) return InvalidArgument("journal path is empty");
  const bool writer = mode == OpenMode::kReadWrite;
  try {
    std::optional<WriterLock> lock;
    if (writer) {
      GFP_RETURN_IF_ERROR(EnsurePrivateDirectory(path.parent_path()));
      GFP_ASSIGN_OR_RETURN(WriterLock acquired, WriterLock::Acquire(path));
      lock.emplace(std::move(acquired));
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) GFP_RETURN_IF_ERROR(EnsurePrivateFile(path));
    } else {
      std::error_code ec;
      if (!std::filesystem::exists(path, ec)) {
        return NotFound("journal " + path.string() + " does not exist");
      }
    }

    const int flags = (writer ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) |
                      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;  // Impl serialises calls
    auto db = std::make_unique<SQLite::Database>(path.string(), flags, kBusyTimeoutMs);

    // Look before writing anything: a wrong path must not turn someone's database into WAL.
    GFP_ASSIGN_OR_RETURN(DatabaseHeader header, ReadDatabaseHeader(db->getHandle(), path));
    GFP_RETURN_IF_ERROR(CheckDatabaseHeader(header, mode, kLatestSchemaVersion, path));

    if (writer) {
      GFP_RETURN_IF_ERROR(EnsurePrivateFile(path));
      GFP_RETURN_IF_ERROR(ConfigureWriter(*db, path));
      GFP_RETURN_IF_ERROR(
          ApplyMigrations(db->getHandle(), EmbeddedMigrations(), header.user_version, path));
      GFP_RETURN_IF_ERROR(RestrictCompanionFiles(path));
    }

    GFP_ASSIGN_OR_RETURN(ChainHasher hasher, ChainHasher::Create());
    auto impl =
        std::make_unique<Impl>(path, mode, std::move(lock), std::move(db), std::move(hasher));
    impl->schema_version = writer ? kLatestSchemaVersion : header.user_version;
    GFP_RETURN_IF_ERROR(impl->PrepareStatements());
    GFP_RETURN_IF_ERROR(impl->LoadTail(/*check=*/writer));
    return std::unique_ptr<Journal>(new Journal(std::move(impl)));
  } catch (const std::exception& e) {
    return StatusFromException(e, "opening the journal", path);
  }
}

std::uint64_t Journal::LastSeq() const { return impl_->last_seq.load(); }
int Journal::SchemaVersion() const { return impl_->schema_version; }
const std::filesystem::path& Journal::path() const { return impl_->path; }
OpenMode Journal::mode() const { return impl_->mode; }

Status Journal::SetMaxPageCountForTesting(std::uint64_t max_pages) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  const std::string sql = "PRAGMA max_page_count = " + std::to_string(max_pages);
  return ExecSql(impl_->handle(), sql.c_str(), "setting max_page_count", impl_->path);
}

}  // namespace gfp::store
