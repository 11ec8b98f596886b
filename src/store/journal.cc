// Opening and closing a journal; accessors. Appends, reads, snapshots and verification live in
// journal_append.cc, journal_read.cc, journal_snapshots.cc and journal_verify.cc; the start-up
// chain check in journal_chain_check.cc.
#include "store/journal.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <string>
#include <system_error>

#include "store/file_permissions.h"
#include "store/journal_impl.h"
#include "store/migrations.h"
#include "store/read_only_open.h"
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

// Size of a file, or -1 when it does not exist (or cannot be inspected).
long long FileSize(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return -1;
  return static_cast<long long>(st.st_size);
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

// While the file is only being looked at, closing must not checkpoint: that would delete a
// damaged -wal (the evidence) or fold it into the file.
void SetCheckpointOnClose(sqlite3* db, bool enabled) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, enabled ? 0 : 1, nullptr);
}

// SQLite URI for a read-only, lock-free open of a file nothing writes (read-only media).
std::string ImmutableUri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (const unsigned char c : path.string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri + "?immutable=1";
}

struct OpenedDb {
  std::unique_ptr<SQLite::Database> db;
  DatabaseHeader header;
  bool immutable = false;
};

Result<OpenedDb> OpenAndReadHeader(const std::string& name, int flags,
                                   const std::filesystem::path& path) {
  OpenedDb out;
  try {
    out.db = std::make_unique<SQLite::Database>(name, flags, kBusyTimeoutMs);
  } catch (const std::exception& e) {
    return StatusFromException(e, "opening the journal", path);
  }
  SetCheckpointOnClose(out.db->getHandle(), false);
  GFP_ASSIGN_OR_RETURN(out.header, ReadDatabaseHeader(out.db->getHandle(), path));
  return out;
}

// A reader needs the -shm index of a WAL journal; where SQLite cannot create it (read-only
// directory or media) and no -wal holds data, the file is opened immutable instead (no locks,
// no files): nothing can be writing there.
Result<OpenedDb> OpenReader(const std::filesystem::path& path) {
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
  auto opened = OpenAndReadHeader(path.string(), flags, path);
  if (opened.ok()) return opened;
  const ErrorCode code = opened.status().code();
  const bool wal_has_data = FileSize(WithSuffix(path, "-wal")) > 0;
  if (code != ErrorCode::kFailedPrecondition || wal_has_data) return opened.status();
  auto fallback = OpenAndReadHeader(ImmutableUri(path), flags | SQLITE_OPEN_URI, path);
  if (!fallback.ok()) return opened.status();
  fallback->immutable = true;
  return fallback;
}

// A non-empty file without journal tables is never made into a journal: it is most likely a
// journal whose events are in a -wal that was lost or not copied along.
Status RefuseUnexpectedlyEmpty(const std::filesystem::path& path, std::uint64_t size) {
  const std::string name = path.string();
  return DataLoss("journal " + name + " has no journal tables (" + std::to_string(size) +
                  " bytes, SQLite application_id 0): if it was copied without its -wal file, or "
                  "the -wal was lost or damaged, restore " +
                  name +
                  "-wal beside it; if it is not a journal, move it away (a writer creates "
                  "a new journal only where no file, or an empty one, exists)");
}

// A zero-length file beside a -wal with data: SQLite would delete that -wal. Refuse instead.
Status CheckEmptyFileHasNoWal(const std::filesystem::path& path) {
  const long long wal = FileSize(WithSuffix(path, "-wal"));
  if (wal <= 0) return Status::Ok();
  return DataLoss("journal " + path.string() + " is empty but " + path.string() + "-wal holds " +
                  std::to_string(wal) +
                  " bytes: the main file was truncated or replaced; restore it from backup "
                  "(nothing was changed)");
}

Result<std::unique_ptr<SQLite::Database>> OpenWriterDb(const std::filesystem::path& path,
                                                       const WriterLock& lock, std::string* note) {
  if (lock.size_at_lock() == 0) GFP_RETURN_IF_ERROR(CheckEmptyFileHasNoWal(path));
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
  GFP_ASSIGN_OR_RETURN(OpenedDb opened, OpenAndReadHeader(path.string(), flags, path));
  const DatabaseHeader& header = opened.header;
  // Measured after SQLite's first read: a creation interrupted by a crash was rolled back
  // (from its -journal) to the empty file it started from.
  const long long size = FileSize(path);
  const bool empty = size == 0;
  if (header.application_id == 0 && header.schema_objects == 0 && header.user_version == 0) {
    if (!empty) return RefuseUnexpectedlyEmpty(path, static_cast<std::uint64_t>(size));
  } else {
    GFP_RETURN_IF_ERROR(
        CheckDatabaseHeader(header, OpenMode::kReadWrite, Journal::kLatestSchemaVersion, path));
  }
  sqlite3* handle = opened.db->getHandle();
  if (empty) {
    *note = lock.created()
                ? "created a new journal " + path.string()
                : "journal " + path.string() + " was an empty file; made it a new journal";
    // Migrated before switching to WAL: the main file then holds the tables and the
    // application_id from the first commit, and a crash mid-way leaves an empty file.
    GFP_RETURN_IF_ERROR(ApplyMigrations(handle, EmbeddedMigrations(), 0, path));
    GFP_RETURN_IF_ERROR(ConfigureWriter(*opened.db, path));
  } else {
    GFP_RETURN_IF_ERROR(ConfigureWriter(*opened.db, path));
    GFP_RETURN_IF_ERROR(ApplyMigrations(handle, EmbeddedMigrations(), header.user_version, path));
  }
  SetCheckpointOnClose(handle, true);
  GFP_RETURN_IF_ERROR(RestrictCompanionFiles(path));
  return std::move(opened.db);
}

}  // namespace

Result<ReadOnlyConnection> OpenReadOnlyConnection(const std::filesystem::path& path) {
  GFP_RETURN_IF_ERROR(CheckJournalFileType(path));
  GFP_ASSIGN_OR_RETURN(OpenedDb opened, OpenReader(path));
  GFP_RETURN_IF_ERROR(
      CheckDatabaseHeader(opened.header, OpenMode::kReadOnly, Journal::kLatestSchemaVersion, path));
  return ReadOnlyConnection{std::move(opened.db), opened.header.user_version, opened.immutable};
}

namespace {

Result<std::unique_ptr<Journal::Impl>> OpenImpl(const std::filesystem::path& path, OpenMode mode) {
  GFP_ASSIGN_OR_RETURN(ChainHasher hasher, ChainHasher::Create());
  if (mode == OpenMode::kReadWrite) {
    GFP_ASSIGN_OR_RETURN(WriterLock lock, WriterLock::Acquire(path));
    std::string note;
    GFP_ASSIGN_OR_RETURN(auto db, OpenWriterDb(path, lock, &note));
    auto impl = std::make_unique<Journal::Impl>(path, mode, std::move(lock), std::move(db),
                                                std::move(hasher));
    impl->schema_version = Journal::kLatestSchemaVersion;
    impl->open_note = std::move(note);
    return impl;
  }
  GFP_ASSIGN_OR_RETURN(ReadOnlyConnection opened, OpenReadOnlyConnection(path));
  auto impl = std::make_unique<Journal::Impl>(path, mode, std::nullopt, std::move(opened.db),
                                              std::move(hasher));
  impl->schema_version = opened.schema_version;
  if (opened.immutable) {
    impl->open_note = "journal " + path.string() +
                      " opened immutable (its -shm could not be created: read-only directory or "
                      "media); changes made while reading are not seen";
  }
  return impl;
}

}  // namespace

Journal::Journal(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Journal::~Journal() {
  // A clean close leaves the history in the main file, not only in the -wal.
  if (impl_ && impl_->mode == OpenMode::kReadWrite) Checkpoint().IgnoreError();
}

Result<std::unique_ptr<Journal>> Journal::Open(const std::filesystem::path& path, OpenMode mode) {
  if (path.empty()) return InvalidArgument("journal path is empty");
  try {
    GFP_ASSIGN_OR_RETURN(std::unique_ptr<Impl> impl, OpenImpl(path, mode));
    GFP_RETURN_IF_ERROR(impl->PrepareStatements());
    GFP_RETURN_IF_ERROR(impl->LoadTail(/*check=*/mode == OpenMode::kReadWrite));
    return std::unique_ptr<Journal>(new Journal(std::move(impl)));
  } catch (const std::exception& e) {
    return StatusFromException(e, "opening the journal", path);
  }
}

Status Journal::Checkpoint() {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  return impl_->CheckpointLocked();
}

Status Journal::CheckpointIfIdle(std::chrono::steady_clock::duration idle_for) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (!j.wal_dirty || std::chrono::steady_clock::now() - j.last_write < idle_for) {
    return Status::Ok();
  }
  return j.CheckpointLocked();
}

Status Journal::CheckStillAtPath() const {
  int moved = 0;
  // SQLITE_NOTFOUND from a VFS without the check: nothing is known to be wrong.
  if (sqlite3_file_control(impl_->handle(), "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK ||
      moved == 0) {
    return Status::Ok();
  }
  struct stat st {};
  const bool deleted = ::stat(impl_->path.c_str(), &st) != 0 && errno == ENOENT;
  std::string message = "journal " + impl_->name() +
                        (deleted ? " was deleted" : " was replaced by another file") +
                        " while this process had it open; what is appended now would be lost";
  if (impl_->lock) {
    message += " (the file this process still holds is readable at /proc/" +
               std::to_string(::getpid()) + "/fd/" + std::to_string(impl_->lock->fd()) +
               " until it stops: copy it before a restart, docs/operations.md)";
  }
  return FailedPrecondition(std::move(message));
}

std::uint64_t Journal::LastSeq() const { return impl_->last_seq.load(); }
int Journal::SchemaVersion() const { return impl_->schema_version; }
const std::filesystem::path& Journal::path() const { return impl_->path; }
OpenMode Journal::mode() const { return impl_->mode; }
const std::string& Journal::open_note() const { return impl_->open_note; }
std::uint64_t Journal::ChainCheckedFrom() const { return impl_->chain_checked_from; }

Status Journal::SetMaxPageCountForTesting(std::uint64_t max_pages) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  const std::string sql = "PRAGMA max_page_count = " + std::to_string(max_pages);
  return ExecSql(impl_->handle(), sql.c_str(), "setting max_page_count", impl_->path);
}

}  // namespace gfp::store
