// Snapshots: the state after event `seq`, stored with a hash that binds it to the event chain
// (a snapshot copied from another journal, or left over after the events changed, is refused).
#include <sqlite3.h>

#include <chrono>
#include <exception>
#include <limits>
#include <string>

#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"
#include "store/statement.h"
#include "store/transaction.h"

namespace gfp::store {
namespace {

std::int64_t NowUnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Status Journal::SaveSnapshot(std::uint64_t seq, std::string_view payload) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (j.mode != OpenMode::kReadWrite) {
    return FailedPrecondition("journal " + j.name() + " is open read-only; cannot save a snapshot");
  }
  const std::uint64_t last = j.last_seq.load();
  if (seq == 0 || seq > last) {
    return InvalidArgument("cannot save a snapshot of journal " + j.name() + " at seq " +
                           std::to_string(seq) + ": its events run from 1 to " +
                           std::to_string(last));
  }
  try {
    GFP_ASSIGN_OR_RETURN(std::optional<Hash> event_hash, j.EventHashAt(seq));
    if (!event_hash) {
      return DataLoss("cannot save a snapshot of journal " + j.name() + " at seq " +
                      std::to_string(seq) + ": that event is missing");
    }
    const std::int64_t created = NowUnixMicros();
    GFP_ASSIGN_OR_RETURN(Hash hash, j.hasher.SnapshotHash(seq, *event_hash, created, payload));
    auto insert = PreparedStatement::Prepare(
        j.handle(),
        "INSERT OR REPLACE INTO snapshots(seq, created_time_us, payload, hash) "
        "VALUES(?1, ?2, ?3, ?4)",
        false, j.path);
    if (!insert.ok()) return insert.status();
    sqlite3_stmt* stmt = insert->get();
    sqlite3_bind_int64(stmt, 1, ToSqlSeq(seq));
    sqlite3_bind_int64(stmt, 2, created);
    BindBlob(stmt, 3, payload);
    BindBlob(stmt, 4, std::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
    const int rc = sqlite3_step(stmt);  // one statement: its own durable transaction
    if (rc != SQLITE_DONE) {
      return SqliteStatus(rc, j.handle(), "saving the snapshot at seq " + std::to_string(seq),
                          j.path);
    }
    j.NoteWrite();
    return Status::Ok();
  } catch (const std::exception& e) {
    return StatusFromException(e, "saving a snapshot", j.path);
  }
}

Result<std::optional<Snapshot>> Journal::LatestValidSnapshot(
    std::uint64_t max_seq, std::vector<std::string>* skipped) const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  try {
    // One read transaction: a concurrent writer cannot change what we compare.
    GFP_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(j.handle(), Transaction::Kind::kRead,
                                                             "reading snapshots", j.path));
    auto query =
        PreparedStatement::Prepare(j.handle(),
                                   "SELECT seq, created_time_us, payload, hash FROM snapshots "
                                   "WHERE seq <= ?1 ORDER BY seq DESC",
                                   false, j.path);
    if (!query.ok()) return query.status();
    sqlite3_stmt* stmt = query->get();
    sqlite3_bind_int64(stmt, 1,
                       max_seq == 0 ? std::numeric_limits<std::int64_t>::max() : ToSqlSeq(max_seq));
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) return std::optional<Snapshot>();
      if (rc != SQLITE_ROW) return SqliteStatus(rc, j.handle(), "reading snapshots", j.path);
      const std::int64_t seq = sqlite3_column_int64(stmt, 0);
      const std::int64_t created = sqlite3_column_int64(stmt, 1);
      const std::string_view payload = ColumnView(stmt, 2);
      const std::string_view hash = ColumnView(stmt, 3);
      GFP_ASSIGN_OR_RETURN(std::string problem, j.SnapshotProblem(seq, created, payload, hash));
      if (problem.empty() && seq > 0) {
        return std::optional<Snapshot>(
            Snapshot{static_cast<std::uint64_t>(seq), std::string(payload)});
      }
      if (skipped != nullptr) skipped->push_back(std::move(problem));
    }
  } catch (const std::exception& e) {
    return StatusFromException(e, "reading snapshots", j.path);
  }
}

Result<std::uint64_t> Journal::PruneSnapshots(std::uint64_t keep_newest,
                                              std::uint64_t sparse_every) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (j.mode != OpenMode::kReadWrite) {
    return FailedPrecondition("journal " + j.name() + " is open read-only; cannot prune snapshots");
  }
  if (keep_newest == 0 || sparse_every == 0) {
    return InvalidArgument("pruning snapshots of journal " + j.name() +
                           ": keep_newest and sparse_every must be at least 1");
  }
  try {
    // The oldest of each span survives: as newer snapshots arrive in the same span, they are
    // the ones deleted, so the kept one never moves.
    auto prune = PreparedStatement::Prepare(
        j.handle(),
        "DELETE FROM snapshots WHERE "
        "seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?1) AND "
        "seq NOT IN (SELECT min(seq) FROM snapshots GROUP BY seq / ?2)",
        false, j.path);
    if (!prune.ok()) return prune.status();
    sqlite3_stmt* stmt = prune->get();
    sqlite3_bind_int64(stmt, 1, ToSqlSeq(keep_newest));
    sqlite3_bind_int64(stmt, 2, ToSqlSeq(sparse_every));
    const int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) return SqliteStatus(rc, j.handle(), "pruning snapshots", j.path);
    j.NoteWrite();
    return static_cast<std::uint64_t>(sqlite3_changes64(j.handle()));
  } catch (const std::exception& e) {
    return StatusFromException(e, "pruning snapshots", j.path);
  }
}

}  // namespace gfp::store
