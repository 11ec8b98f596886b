// Whole-journal check: every event from seq 1 (contiguity, recomputed chain hash, then the
// caller's decode/replay), then every snapshot against the verified chain. First problem wins.
#include <sqlite3.h>

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

// Stops a scan once the report holds the problem.
Status Stop() { return DataLoss("verification stopped"); }

}  // namespace

VerifyReport Journal::Verify(const std::function<Status(const StoredEvent&)>& per_event) const {
  VerifyReport report;
  const auto fail = [&report](std::uint64_t seq, std::string reason) {
    report.ok = false;
    report.first_bad_seq = seq;
    report.reason = std::move(reason);
  };
  CallGuard guard(*impl_);
  if (Status s = guard.status(); !s.ok()) {
    fail(0, s.message());
    return report;
  }
  Impl& j = *impl_;
  try {
    auto txn = Transaction::Begin(j.handle(), Transaction::Kind::kRead, "verifying", j.path);
    if (!txn.ok()) {
      fail(0, txn.status().message());
      return report;
    }
    std::uint64_t expected = 1;
    Hash prev = kZeroHash;
    StoredEvent ev;
    // The whole table, not just seq >= 1: a seq changed to zero or below must be seen too.
    const Status scan = j.ScanRows(
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
        [&](const EventRow& row) -> Status {
          const auto at = [&expected] { return "event seq " + std::to_string(expected); };
          if (row.seq != static_cast<std::int64_t>(expected)) {
            fail(expected,
                 row.seq > static_cast<std::int64_t>(expected)
                     ? at() + " is missing (the next stored event has seq " +
                           std::to_string(row.seq) + ")"
                     : "found an event with seq " + std::to_string(row.seq) + " (seqs start at 1)");
            return Stop();
          }
          Hash stored{};
          if (!ToHash(row.hash, &stored)) {
            fail(expected,
                 at() + ": its hash is " + std::to_string(row.hash.size()) + " bytes, expected 32");
            return Stop();
          }
          auto computed =
              j.hasher.EventHash(prev, expected, row.time_unix_micros, row.type, row.payload);
          if (!computed.ok()) {
            fail(expected, at() + ": " + computed.status().message());
            return Stop();
          }
          if (*computed != stored) {
            fail(expected, at() + ": stored hash " + HashToHex(stored) +
                               " does not match the recomputed hash " + HashToHex(*computed) +
                               " (its time, type, payload or hash was changed)");
            return Stop();
          }
          if (per_event) {
            ev.seq = expected;
            ev.time_unix_micros = row.time_unix_micros;
            ev.type.assign(row.type);
            ev.payload.assign(row.payload);
            ev.hash = stored;
            if (Status s = per_event(ev); !s.ok()) {
              fail(expected, at() + " (" + ev.type + "): " + s.message());
              return Stop();
            }
          }
          prev = stored;
          ++expected;
          ++report.events_checked;
          return Status::Ok();
        });
    if (!report.ok) return report;
    if (!scan.ok()) {
      fail(0, scan.message());
      return report;
    }

    auto query = PreparedStatement::Prepare(
        j.handle(), "SELECT seq, created_time_us, payload, hash FROM snapshots ORDER BY seq", false,
        j.path);
    if (!query.ok()) {
      fail(0, query.status().message());
      return report;
    }
    sqlite3_stmt* stmt = query->get();
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        fail(0, SqliteStatus(rc, j.handle(), "reading snapshots", j.path).message());
        return report;
      }
      const std::int64_t seq = sqlite3_column_int64(stmt, 0);
      auto problem = j.SnapshotProblem(seq, sqlite3_column_int64(stmt, 1), ColumnView(stmt, 2),
                                       ColumnView(stmt, 3));
      if (!problem.ok()) {
        fail(0, problem.status().message());
        return report;
      }
      if (!problem->empty()) {
        fail(seq > 0 ? static_cast<std::uint64_t>(seq) : 0, *problem);
        return report;
      }
      ++report.snapshots_checked;
    }
  } catch (const std::exception& e) {
    fail(0, StatusFromException(e, "verifying", j.path).message());
  }
  return report;
}

}  // namespace gfp::store
