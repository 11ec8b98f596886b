// What a writer checks at open: the chain from the newest valid snapshot (what the state is
// rebuilt from) to the end, and that no snapshot lies beyond the end. Older history is left to
// Verify (run in the background by BackgroundVerifier), so start-up time stays bounded by the
// snapshot interval instead of the journal's length.
#include <sqlite3.h>

#include <exception>
#include <string>

#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"
#include "store/statement.h"

namespace gfp::store {
Result<Hash> Journal::Impl::CheckChainLocked(std::uint64_t from_seq, std::uint64_t to_seq) {
  const auto corrupt = [&](std::uint64_t seq, const std::string& reason) {
    return DataLoss("journal " + name() + " is corrupt at seq " + std::to_string(seq) + ": " +
                    reason + "; inspect it with `gpu-fabric-plugin journal verify --journal " +
                    name() + "`");
  };
  std::uint64_t expected = from_seq > 0 ? from_seq : 1;
  Hash prev = kZeroHash;
  Status scan = ScanRows(ToSqlSeq(expected), ToSqlSeq(to_seq), [&](const EventRow& row) -> Status {
    const auto seq = static_cast<std::uint64_t>(row.seq);
    if (seq != expected) {
      return corrupt(expected, "event seq " + std::to_string(expected) +
                                   " is missing (the next stored event has seq " +
                                   std::to_string(row.seq) + ")");
    }
    Hash stored{};
    if (!ToHash(row.hash, &stored)) {
      return corrupt(seq, "its hash is " + std::to_string(row.hash.size()) + " bytes, expected 32");
    }
    // The snapshot's event only anchors the chain: the snapshot hash already binds its hash.
    if (seq != from_seq) {
      GFP_ASSIGN_OR_RETURN(
          Hash computed, hasher.EventHash(prev, seq, row.time_unix_micros, row.type, row.payload));
      if (computed != stored) {
        return corrupt(seq, "stored hash " + HashToHex(stored) +
                                " does not match the recomputed hash " + HashToHex(computed));
      }
    }
    prev = stored;
    ++expected;
    return Status::Ok();
  });
  GFP_RETURN_IF_ERROR(scan);
  if (to_seq >= (from_seq > 0 ? from_seq : 1) && expected != to_seq + 1) {
    return corrupt(expected, "event seq " + std::to_string(expected) + " is missing");
  }
  return prev;
}

Result<std::uint64_t> Journal::Impl::NewestValidSnapshotSeq() {
  GFP_ASSIGN_OR_RETURN(
      PreparedStatement query,
      PreparedStatement::Prepare(
          handle(), "SELECT seq, created_time_us, payload, hash FROM snapshots ORDER BY seq DESC",
          false, path));
  sqlite3_stmt* stmt = query.get();
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return std::uint64_t{0};
    if (rc != SQLITE_ROW) return SqliteStatus(rc, handle(), "reading snapshots", path);
    const std::int64_t seq = sqlite3_column_int64(stmt, 0);
    GFP_ASSIGN_OR_RETURN(std::string problem,
                         SnapshotProblem(seq, sqlite3_column_int64(stmt, 1), ColumnView(stmt, 2),
                                         ColumnView(stmt, 3)));
    if (problem.empty() && seq > 0) return static_cast<std::uint64_t>(seq);
  }
}

Status Journal::Impl::LoadTail(bool check) {
  // Two queries on purpose: SQLite answers a lone min() or max() from the B-tree edge, but
  // "SELECT min(seq), max(seq)" scans the whole table.
  GFP_ASSIGN_OR_RETURN(const std::int64_t max_seq,
                       QueryInt64("SELECT max(seq) FROM events", "reading the newest event"));
  GFP_ASSIGN_OR_RETURN(const std::int64_t min_seq,
                       QueryInt64("SELECT min(seq) FROM events", "reading the oldest event"));
  last_hash = kZeroHash;
  last_seq = max_seq > 0 ? static_cast<std::uint64_t>(max_seq) : 0;
  if (!check) return Status::Ok();  // read-only: last_hash is never used, Verify checks
  const std::uint64_t last = last_seq.load();
  if (min_seq < 0 || (max_seq > 0 && min_seq != 1)) {
    return DataLoss("journal " + name() + " is corrupt at seq 1: the first stored event has seq " +
                    std::to_string(min_seq) + " (seqs start at 1); inspect it with " +
                    "`gpu-fabric-plugin journal verify --journal " + name() + "`");
  }
  GFP_ASSIGN_OR_RETURN(const std::int64_t newest_snapshot,
                       QueryInt64("SELECT max(seq) FROM snapshots", "reading the newest snapshot"));
  if (newest_snapshot > max_seq) {
    return DataLoss("journal " + name() + " has a snapshot of the state after seq " +
                    std::to_string(newest_snapshot) + " but its events end at seq " +
                    std::to_string(last) + ": events " + std::to_string(last + 1) + ".." +
                    std::to_string(newest_snapshot) +
                    " were deleted; restore the journal from backup");
  }
  if (last == 0) return Status::Ok();
  GFP_ASSIGN_OR_RETURN(chain_checked_from, NewestValidSnapshotSeq());
  GFP_ASSIGN_OR_RETURN(last_hash, CheckChainLocked(chain_checked_from, last));
  return Status::Ok();
}

Status Journal::CheckChain(std::uint64_t from_seq, std::uint64_t to_seq) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  try {
    auto checked = impl_->CheckChainLocked(from_seq, to_seq);
    return checked.ok() ? Status::Ok() : checked.status();
  } catch (const std::exception& e) {
    return StatusFromException(e, "checking the hash chain", impl_->path);
  }
}

Status Journal::Impl::CheckpointLocked() {
  if (mode != OpenMode::kReadWrite) return Status::Ok();
  int wal_frames = 0;
  int copied = 0;
  const int rc =
      sqlite3_wal_checkpoint_v2(handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &wal_frames, &copied);
  if (rc != SQLITE_OK) return SqliteStatus(rc, handle(), "checkpointing the -wal", path);
  // A reader still on an older snapshot can keep frames from being copied: try again later.
  wal_dirty = copied < wal_frames;
  return Status::Ok();
}

}  // namespace gfp::store
