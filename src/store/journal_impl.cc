// Helpers of Journal::Impl shared by the open, append, read, snapshot and verify paths.
#include "store/journal_impl.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>

#include "store/sqlite_status.h"

namespace gfp::store {
std::string_view ColumnView(sqlite3_stmt* stmt, int column) {
  // Order matters: sqlite3_column_blob first, then sqlite3_column_bytes (SQLite docs).
  const void* data = sqlite3_column_blob(stmt, column);
  const int size = sqlite3_column_bytes(stmt, column);
  if (data == nullptr || size <= 0) return {};
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

CallGuard::CallGuard(Journal::Impl& impl) : impl_(impl) {
  if (impl_.owner.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
    reentrant_ = true;
    return;
  }
  impl_.mu.lock();
  impl_.owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
}

CallGuard::~CallGuard() {
  if (reentrant_) return;
  impl_.owner.store(std::thread::id(), std::memory_order_relaxed);
  impl_.mu.unlock();
}

Status CallGuard::status() const {
  if (!reentrant_) return Status::Ok();
  return FailedPrecondition("journal " + impl_.name() +
                            " was called from inside one of its own ForEach/Verify callbacks");
}

StatementReset::~StatementReset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool ToHash(std::string_view bytes, Hash* out) {
  if (bytes.size() != out->size()) return false;
  std::memcpy(out->data(), bytes.data(), out->size());
  return true;
}

int BindBlob(sqlite3_stmt* stmt, int index, std::string_view bytes) {
  // A null pointer would bind SQL NULL, which the NOT NULL columns reject.
  const char* data = bytes.data() != nullptr ? bytes.data() : "";
  return sqlite3_bind_blob64(stmt, index, data, bytes.size(), SQLITE_STATIC);
}

Status Journal::Impl::PrepareStatements() {
  GFP_ASSIGN_OR_RETURN(scan_events,
                       PreparedStatement::Prepare(handle(),
                                                  "SELECT seq, time_us, type, payload, hash "
                                                  "FROM events WHERE seq >= ?1 AND seq <= ?2 "
                                                  "ORDER BY seq",
                                                  true, path));
  GFP_ASSIGN_OR_RETURN(
      event_hash_at,
      PreparedStatement::Prepare(handle(), "SELECT hash FROM events WHERE seq = ?1", true, path));
  GFP_ASSIGN_OR_RETURN(
      event_at, PreparedStatement::Prepare(handle(),
                                           "SELECT seq, time_us, type, payload, hash FROM events "
                                           "WHERE seq = ?1",
                                           true, path));
  if (mode != OpenMode::kReadWrite) return Status::Ok();
  GFP_ASSIGN_OR_RETURN(insert_event,
                       PreparedStatement::Prepare(handle(),
                                                  "INSERT INTO events(seq, time_us, type, "
                                                  "payload, hash) VALUES(?1, ?2, ?3, ?4, ?5)",
                                                  true, path));
  // OR IGNORE: a tag given twice for one event is one row.
  GFP_ASSIGN_OR_RETURN(insert_event_subject,
                       PreparedStatement::Prepare(handle(),
                                                  "INSERT OR IGNORE INTO event_subjects("
                                                  "subject_id, seq, time_us) VALUES(?1, ?2, ?3)",
                                                  true, path));
  GFP_ASSIGN_OR_RETURN(
      find_subject,
      PreparedStatement::Prepare(handle(), "SELECT id FROM subjects WHERE tag = ?1", true, path));
  GFP_ASSIGN_OR_RETURN(
      insert_subject,
      PreparedStatement::Prepare(handle(), "INSERT INTO subjects(tag) VALUES(?1)", true, path));
  return Status::Ok();
}

Status Journal::Impl::ScanRows(std::int64_t from, std::int64_t to,
                               const std::function<Status(const EventRow&)>& fn) {
  sqlite3_stmt* stmt = scan_events.get();
  StatementReset reset(stmt);
  sqlite3_bind_int64(stmt, 1, from);
  sqlite3_bind_int64(stmt, 2, to);
  EventRow row;
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc != SQLITE_ROW) return SqliteStatus(rc, handle(), "reading events", path);
    row.seq = sqlite3_column_int64(stmt, 0);
    row.time_unix_micros = sqlite3_column_int64(stmt, 1);
    row.type = ColumnView(stmt, 2);
    row.payload = ColumnView(stmt, 3);
    row.hash = ColumnView(stmt, 4);
    GFP_RETURN_IF_ERROR(fn(row));
  }
}

Result<std::int64_t> Journal::Impl::SubjectId(const std::string& tag,
                                              std::vector<std::string>* added) {
  if (auto it = subject_ids.find(tag); it != subject_ids.end()) return it->second;
  std::int64_t id = 0;
  {
    sqlite3_stmt* find = find_subject.get();
    StatementReset reset(find);
    sqlite3_bind_text64(find, 1, tag.data(), tag.size(), SQLITE_STATIC, SQLITE_UTF8);
    const int rc = sqlite3_step(find);
    if (rc == SQLITE_ROW) id = sqlite3_column_int64(find, 0);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return SqliteStatus(rc, handle(), "looking up subject tag", path);
    }
  }
  if (id == 0) {
    sqlite3_stmt* insert = insert_subject.get();
    StatementReset reset(insert);
    sqlite3_bind_text64(insert, 1, tag.data(), tag.size(), SQLITE_STATIC, SQLITE_UTF8);
    const int rc = sqlite3_step(insert);
    if (rc != SQLITE_DONE) return SqliteStatus(rc, handle(), "adding subject tag", path);
    id = sqlite3_last_insert_rowid(handle());
  }
  subject_ids.emplace(tag, id);
  added->push_back(tag);
  return id;
}

Status Journal::Impl::InsertSubjects(std::span<const std::string> tags, std::uint64_t seq,
                                     std::int64_t time_us, std::vector<std::string>* added) {
  sqlite3_stmt* stmt = insert_event_subject.get();
  for (const std::string& tag : tags) {
    GFP_ASSIGN_OR_RETURN(std::int64_t id, SubjectId(tag, added));
    StatementReset reset(stmt);
    sqlite3_bind_int64(stmt, 1, id);
    sqlite3_bind_int64(stmt, 2, ToSqlSeq(seq));
    sqlite3_bind_int64(stmt, 3, time_us);
    const int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) {
      return SqliteStatus(rc, handle(), "indexing event seq " + std::to_string(seq), path);
    }
  }
  return Status::Ok();
}

Result<std::uint64_t> Journal::Impl::SubjectsFromSeq() {
  if (schema_version < kFirstIndexedSchema) {
    GFP_ASSIGN_OR_RETURN(std::int64_t last,
                         QueryInt64("SELECT max(seq) FROM events", "reading events"));
    return static_cast<std::uint64_t>(last < 0 ? 0 : last) + 1;
  }
  GFP_ASSIGN_OR_RETURN(std::int64_t from,
                       QueryInt64("SELECT value FROM journal_meta WHERE key = 'subjects_from_seq'",
                                  "reading journal_meta"));
  return from <= 0 ? 1 : static_cast<std::uint64_t>(from);
}

Result<bool> Journal::Impl::EventAt(std::int64_t seq, EventRow* row) {
  sqlite3_stmt* stmt = event_at.get();
  sqlite3_reset(stmt);  // the row's views stay valid until the next call
  sqlite3_bind_int64(stmt, 1, seq);
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return false;
  if (rc != SQLITE_ROW) return SqliteStatus(rc, handle(), "reading events", path);
  row->seq = sqlite3_column_int64(stmt, 0);
  row->time_unix_micros = sqlite3_column_int64(stmt, 1);
  row->type = ColumnView(stmt, 2);
  row->payload = ColumnView(stmt, 3);
  row->hash = ColumnView(stmt, 4);
  return true;
}

Result<std::optional<Hash>> Journal::Impl::EventHashAt(std::uint64_t seq) {
  sqlite3_stmt* stmt = event_hash_at.get();
  StatementReset reset(stmt);
  sqlite3_bind_int64(stmt, 1, ToSqlSeq(seq));
  const int rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return std::optional<Hash>();
  if (rc != SQLITE_ROW) return SqliteStatus(rc, handle(), "reading event hash", path);
  Hash hash{};
  if (!ToHash(ColumnView(stmt, 0), &hash)) {
    return DataLoss("event seq " + std::to_string(seq) + " of journal " + name() +
                    " has a hash of " + std::to_string(sqlite3_column_bytes(stmt, 0)) +
                    " bytes, expected 32");
  }
  return std::optional<Hash>(hash);
}

Result<std::int64_t> Journal::Impl::QueryInt64(const char* sql, std::string_view operation) {
  GFP_ASSIGN_OR_RETURN(PreparedStatement stmt,
                       PreparedStatement::Prepare(handle(), sql, false, path));
  const int rc = sqlite3_step(stmt.get());
  if (rc != SQLITE_ROW) return SqliteStatus(rc, handle(), operation, path);
  return sqlite3_column_int64(stmt.get(), 0);  // NULL (empty table) reads as 0
}

Result<std::string> Journal::Impl::SnapshotProblem(std::int64_t seq, std::int64_t created_time_us,
                                                   std::string_view payload,
                                                   std::string_view stored_hash) {
  const std::string where = "snapshot at seq " + std::to_string(seq);
  Hash stored{};
  if (!ToHash(stored_hash, &stored)) {
    return where + ": its hash is " + std::to_string(stored_hash.size()) + " bytes, expected 32";
  }
  if (seq <= 0) return where + ": snapshot seqs start at 1";
  GFP_ASSIGN_OR_RETURN(std::optional<Hash> event_hash,
                       EventHashAt(static_cast<std::uint64_t>(seq)));
  if (!event_hash)
    return where + ": it is bound to event seq " + std::to_string(seq) + ", which does not exist";
  GFP_ASSIGN_OR_RETURN(Hash computed, hasher.SnapshotHash(static_cast<std::uint64_t>(seq),
                                                          *event_hash, created_time_us, payload));
  if (computed != stored) {
    return where + ": stored hash " + HashToHex(stored) + " does not match the hash " +
           HashToHex(computed) + " of its contents and event seq " + std::to_string(seq);
  }
  return std::string();
}

Status Journal::Impl::SetFullSync(bool full) {
  if (full_sync == full) return Status::Ok();
  GFP_RETURN_IF_ERROR(
      ExecSql(handle(), full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL",
              full ? "setting synchronous=FULL" : "setting synchronous=NORMAL", path));
  full_sync = full;
  return Status::Ok();
}

}  // namespace gfp::store
