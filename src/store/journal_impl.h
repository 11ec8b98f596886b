// Private state of a Journal, shared by the journal_*.cc files. Not part of the public API.
#pragma once

#include <SQLiteCpp/Database.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/file_lock.h"
#include "store/hash_chain.h"
#include "store/journal.h"
#include "store/statement.h"

struct sqlite3_stmt;

namespace gfp::store {

// One events row as SQLite hands it out; the views are valid until the next step.
struct EventRow {
  std::int64_t seq = 0;
  std::int64_t time_unix_micros = 0;
  std::string_view type;
  std::string_view payload;
  std::string_view hash;
};

struct Journal::Impl {
  Impl(std::filesystem::path p, OpenMode m, std::optional<WriterLock> l,
       std::unique_ptr<SQLite::Database> d, ChainHasher h)
      : path(std::move(p)), mode(m), lock(std::move(l)), db(std::move(d)), hasher(std::move(h)) {}

  // Members are destroyed bottom-up: statements, then the connection, then the writer lock.
  std::filesystem::path path;
  OpenMode mode;
  std::optional<WriterLock> lock;
  std::unique_ptr<SQLite::Database> db;
  ChainHasher hasher;
  int schema_version = 0;
  std::string open_note;  // what Open did that the caller should log ("" = nothing notable)
  std::atomic<std::uint64_t> last_seq{0};
  Hash last_hash{};
  // Writer: the chain was re-hashed at open from this seq (the newest valid snapshot) on.
  std::uint64_t chain_checked_from = 0;
  // Writer: the -wal holds frames written since the last checkpoint, and when the last was.
  bool wal_dirty = false;
  // Writer: the connection commits with synchronous=FULL. False only while an append that asked
  // for Durability::kSurvivesProcessCrash runs, or after putting FULL back failed (the next
  // append then puts it back first, or fails).
  bool full_sync = true;
  std::chrono::steady_clock::time_point last_write{};
  PreparedStatement insert_event;  // read-write journals only
  PreparedStatement insert_event_subject;
  PreparedStatement find_subject;
  PreparedStatement insert_subject;
  PreparedStatement scan_events;
  PreparedStatement event_hash_at;
  PreparedStatement event_at;
  // Writer: subjects.id of each tag seen so far (committed rows only).
  std::unordered_map<std::string, std::int64_t> subject_ids;

  std::mutex mu;
  std::atomic<std::thread::id> owner{};

  sqlite3* handle() const { return db->getHandle(); }
  std::string name() const { return path.string(); }

  // Prepares the statements used on hot paths once.
  Status PrepareStatements();
  // The single integer a query returns (0 for NULL).
  Result<std::int64_t> QueryInt64(const char* sql, std::string_view operation);
  // Reads max(seq) and the newest hash. With `check` (writer): the first seq must be 1, no
  // snapshot may lie beyond the last event, and the chain is re-hashed from the newest valid
  // snapshot (or seq 1) to the end (DataLoss naming the seq).
  Status LoadTail(bool check);
  // Re-hashes events from_seq+1..to_seq (contiguous, chained from the stored hash of from_seq;
  // from_seq 0 = from seq 1) and returns the stored hash of to_seq. DataLoss names the seq.
  Result<Hash> CheckChainLocked(std::uint64_t from_seq, std::uint64_t to_seq);
  // The seq of the newest snapshot whose hash checks out, 0 if none (reads only snapshots).
  Result<std::uint64_t> NewestValidSnapshotSeq();
  // Copies the -wal into the main file (PASSIVE: never waits for readers) and clears wal_dirty.
  Status CheckpointLocked();
  // Sets synchronous=FULL (true) or NORMAL (false) on the connection when it differs.
  Status SetFullSync(bool full);
  // Marks that a write transaction committed (the -wal holds new frames).
  void NoteWrite() {
    wal_dirty = true;
    last_write = std::chrono::steady_clock::now();
  }
  // Calls fn for rows with from <= seq <= to in order; the caller holds the lock. Signed, so
  // Verify can also see rows whose seq was changed to zero or below.
  Status ScanRows(std::int64_t from, std::int64_t to,
                  const std::function<Status(const EventRow&)>& fn);
  // The subjects.id of `tag`, adding the row when it is new (writer, inside the append's
  // transaction); new tags are also listed in *added so a failed append can forget them.
  Result<std::int64_t> SubjectId(const std::string& tag, std::vector<std::string>* added);
  // Writes the index rows of event `seq`.
  Status InsertSubjects(std::span<const std::string> tags, std::uint64_t seq, std::int64_t time_us,
                        std::vector<std::string>* added);
  // journal_meta.subjects_from_seq (for a schema-1 journal read as it is: after its last event).
  Result<std::uint64_t> SubjectsFromSeq();
  // Reads event `seq` into *row (false when there is no such event).
  Result<bool> EventAt(std::int64_t seq, EventRow* row);
  // The stored hash of event `seq`, or nullopt if there is no such event.
  Result<std::optional<Hash>> EventHashAt(std::uint64_t seq);
  // Why a snapshot row does not check out, or an empty string when it does.
  Result<std::string> SnapshotProblem(std::int64_t seq, std::int64_t created_time_us,
                                      std::string_view payload, std::string_view stored_hash);
};

// Forgets the tags a write transaction added to Impl::subject_ids unless it committed (their
// subjects rows rolled back with it).
class ForgetNewTagsUnlessCommitted {
 public:
  explicit ForgetNewTagsUnlessCommitted(Journal::Impl& j) : j_(j) {}
  ~ForgetNewTagsUnlessCommitted() {
    if (committed_) return;
    for (const auto& tag : added_) j_.subject_ids.erase(tag);
  }
  ForgetNewTagsUnlessCommitted(const ForgetNewTagsUnlessCommitted&) = delete;
  ForgetNewTagsUnlessCommitted& operator=(const ForgetNewTagsUnlessCommitted&) = delete;

  std::vector<std::string>* added() { return &added_; }
  void Committed() { committed_ = true; }

 private:
  Journal::Impl& j_;
  std::vector<std::string> added_;
  bool committed_ = false;
};

// Serialises calls on one Journal, and turns a call made from inside one of its own callbacks
// into an error instead of a deadlock.
class CallGuard {
 public:
  explicit CallGuard(Journal::Impl& impl);
  ~CallGuard();
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;
  // FailedPrecondition when the call is re-entrant.
  Status status() const;

 private:
  Journal::Impl& impl_;
  bool reentrant_ = false;
};

// Schema 1 (read as it is by a reader) has no index: every event is before it.
inline constexpr int kFirstIndexedSchema = 2;

// SQLite integers are signed; seq arguments beyond int64 mean "no bound".
inline std::int64_t ToSqlSeq(std::uint64_t seq) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(seq > kMax ? kMax : seq);
}

// Copies a 32-byte blob into a Hash; false when the length is wrong.
bool ToHash(std::string_view bytes, Hash* out);

// Binds bytes as a BLOB that lives until the statement is stepped (empty is a zero-length BLOB,
// never NULL).
int BindBlob(sqlite3_stmt* stmt, int index, std::string_view bytes);

// Resets a prepared statement (and its bindings) when a scan ends, however it ends.
class StatementReset {
 public:
  explicit StatementReset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~StatementReset();
  StatementReset(const StatementReset&) = delete;
  StatementReset& operator=(const StatementReset&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

// A BLOB or TEXT column of the current row, valid until the statement steps or resets.
std::string_view ColumnView(sqlite3_stmt* stmt, int column);

}  // namespace gfp::store
