// Appending events: one BEGIN IMMEDIATE transaction per batch, hashes chained from the tail.
#include <sqlite3.h>

#include <exception>
#include <string>
#include <vector>

#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"
#include "store/transaction.h"

namespace gfp::store {

namespace {

// Every event has a type name and no empty tag.
Status CheckBatch(const Journal::Impl& j, std::span<const NewEvent> events) {
  if (events.empty()) return InvalidArgument("append to journal " + j.name() + ": no events given");
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].type.empty()) {
      return InvalidArgument("append to journal " + j.name() + ": event " + std::to_string(i) +
                             " of the batch has an empty type name");
    }
    for (const std::string& tag : events[i].subjects) {
      if (tag.empty()) {
        return InvalidArgument("append to journal " + j.name() + ": event " + std::to_string(i) +
                               " of the batch has an empty subject tag");
      }
    }
  }
  return Status::Ok();
}

// Puts synchronous=FULL back when an append that relaxed it ends, however it ends. Should that
// fail, the next append puts it back before it begins, or fails.
class FullSyncAfterwards {
 public:
  explicit FullSyncAfterwards(Journal::Impl& j) : j_(j) {}
  ~FullSyncAfterwards() { j_.SetFullSync(true).IgnoreError(); }
  FullSyncAfterwards(const FullSyncAfterwards&) = delete;
  FullSyncAfterwards& operator=(const FullSyncAfterwards&) = delete;

 private:
  Journal::Impl& j_;
};

}  // namespace

Result<std::uint64_t> Journal::Append(std::span<const NewEvent> events, Durability durability) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (j.mode != OpenMode::kReadWrite) {
    return FailedPrecondition("journal " + j.name() + " is open read-only; cannot append");
  }
  GFP_RETURN_IF_ERROR(CheckBatch(j, events));
  GFP_RETURN_IF_ERROR(CheckStillAtPath());
  GFP_RETURN_IF_ERROR(j.SetFullSync(durability == Durability::kSurvivesPowerLoss));
  const FullSyncAfterwards full_sync_afterwards(j);  // outlives the transaction below
  ForgetNewTagsUnlessCommitted new_tags(j);          // tags first seen in this append
  try {
    sqlite3* db = j.handle();
    GFP_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db, Transaction::Kind::kWrite,
                                                             "appending events", j.path));
    sqlite3_stmt* stmt = j.insert_event.get();
    // The in-memory tail moves only after COMMIT succeeded; on any failure it stays as it was.
    std::uint64_t seq = j.last_seq.load();
    Hash prev = j.last_hash;
    for (const NewEvent& ev : events) {
      ++seq;
      GFP_ASSIGN_OR_RETURN(Hash hash,
                           j.hasher.EventHash(prev, seq, ev.time_unix_micros, ev.type, ev.payload));
      StatementReset reset(stmt);
      sqlite3_bind_int64(stmt, 1, ToSqlSeq(seq));
      sqlite3_bind_int64(stmt, 2, ev.time_unix_micros);
      sqlite3_bind_text64(stmt, 3, ev.type.data(), ev.type.size(), SQLITE_STATIC, SQLITE_UTF8);
      BindBlob(stmt, 4, ev.payload);
      BindBlob(stmt, 5, std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
      const int rc = sqlite3_step(stmt);
      if (rc != SQLITE_DONE) {
        return SqliteStatus(rc, db, "appending event seq " + std::to_string(seq), j.path);
      }
      GFP_RETURN_IF_ERROR(
          j.InsertSubjects(ev.subjects, seq, ev.time_unix_micros, new_tags.added()));
      prev = hash;
    }
    GFP_RETURN_IF_ERROR(txn.Commit());
    new_tags.Committed();
    j.NoteWrite();
    const std::uint64_t first = j.last_seq.load() + 1;
    j.last_hash = prev;
    j.last_seq.store(seq);
    return first;
  } catch (const std::exception& e) {
    return StatusFromException(e, "appending events", j.path);
  }
}

}  // namespace gfp::store
