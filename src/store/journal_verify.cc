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

// One pass of Journal::Verify: the report and the chain so far.
class Verifier {
 public:
  Verifier(Journal::Impl& j, const std::function<Status(const StoredEvent&)>& per_event,
           VerifyReport& report)
      : j_(j), per_event_(per_event), report_(report) {}

  void Fail(std::uint64_t seq, std::string reason) {
    report_.ok = false;
    report_.first_bad_seq = seq;
    report_.reason = std::move(reason);
  }

  // Step 1: every event row from the lowest seq (a seq changed to zero or below must be seen
  // too), contiguous from 1, re-hashing to its stored hash, then the caller's check.
  void CheckEvents() {
    const Status scan = j_.ScanRows(std::numeric_limits<std::int64_t>::min(),
                                    std::numeric_limits<std::int64_t>::max(),
                                    [this](const EventRow& row) { return CheckEvent(row); });
    if (report_.ok && !scan.ok()) Fail(0, scan.message());
  }

  // Step 2: every snapshot against the verified chain.
  void CheckSnapshots() {
    auto query = PreparedStatement::Prepare(
        j_.handle(), "SELECT seq, created_time_us, payload, hash FROM snapshots ORDER BY seq",
        false, j_.path);
    if (!query.ok()) return Fail(0, query.status().message());
    sqlite3_stmt* stmt = query->get();
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) return;
      if (rc != SQLITE_ROW) {
        return Fail(0, SqliteStatus(rc, j_.handle(), "reading snapshots", j_.path).message());
      }
      const std::int64_t seq = sqlite3_column_int64(stmt, 0);
      auto problem = j_.SnapshotProblem(seq, sqlite3_column_int64(stmt, 1), ColumnView(stmt, 2),
                                        ColumnView(stmt, 3));
      if (!problem.ok()) return Fail(0, problem.status().message());
      if (!problem->empty()) return Fail(seq > 0 ? static_cast<std::uint64_t>(seq) : 0, *problem);
      ++report_.snapshots_checked;
    }
  }

 private:
  std::string At() const { return "event seq " + std::to_string(expected_); }

  // The row's seq is the next one expected; false (and the report says why) otherwise.
  bool CheckSeq(const EventRow& row) {
    if (row.seq == static_cast<std::int64_t>(expected_)) return true;
    Fail(expected_,
         row.seq > static_cast<std::int64_t>(expected_)
             ? At() + " is missing (the next stored event has seq " + std::to_string(row.seq) + ")"
             : "found an event with seq " + std::to_string(row.seq) + " (seqs start at 1)");
    return false;
  }

  // The stored hash is 32 bytes and is the recomputed chain hash.
  bool CheckHash(const EventRow& row, Hash* stored) {
    if (!ToHash(row.hash, stored)) {
      Fail(expected_,
           At() + ": its hash is " + std::to_string(row.hash.size()) + " bytes, expected 32");
      return false;
    }
    auto computed =
        j_.hasher.EventHash(prev_, expected_, row.time_unix_micros, row.type, row.payload);
    if (!computed.ok()) {
      Fail(expected_, At() + ": " + computed.status().message());
      return false;
    }
    if (*computed == *stored) return true;
    Fail(expected_, At() + ": stored hash " + HashToHex(*stored) +
                        " does not match the recomputed hash " + HashToHex(*computed) +
                        " (its time, type, payload or hash was changed)");
    return false;
  }

  bool CheckWithCaller(const EventRow& row, const Hash& stored) {
    if (!per_event_) return true;
    ev_.seq = expected_;
    ev_.time_unix_micros = row.time_unix_micros;
    ev_.type.assign(row.type);
    ev_.payload.assign(row.payload);
    ev_.hash = stored;
    const Status s = per_event_(ev_);
    if (s.ok()) return true;
    Fail(expected_, At() + " (" + ev_.type + "): " + s.message());
    return false;
  }

  Status CheckEvent(const EventRow& row) {
    Hash stored{};
    if (!CheckSeq(row) || !CheckHash(row, &stored) || !CheckWithCaller(row, stored)) return Stop();
    prev_ = stored;
    ++expected_;
    ++report_.events_checked;
    return Status::Ok();
  }

  Journal::Impl& j_;
  const std::function<Status(const StoredEvent&)>& per_event_;
  VerifyReport& report_;
  std::uint64_t expected_ = 1;
  Hash prev_ = kZeroHash;
  StoredEvent ev_;
};

}  // namespace

VerifyReport Journal::Verify(const std::function<Status(const StoredEvent&)>& per_event) const {
  VerifyReport report;
  Verifier verifier(*impl_, per_event, report);
  CallGuard guard(*impl_);
  if (Status s = guard.status(); !s.ok()) {
    verifier.Fail(0, s.message());
    return report;
  }
  Impl& j = *impl_;
  try {
    // One read transaction: a concurrent writer cannot change what is compared.
    auto txn = Transaction::Begin(j.handle(), Transaction::Kind::kRead, "verifying", j.path);
    if (!txn.ok()) {
      verifier.Fail(0, txn.status().message());
      return report;
    }
    verifier.CheckEvents();
    if (report.ok) verifier.CheckSnapshots();
  } catch (const std::exception& e) {
    verifier.Fail(0, StatusFromException(e, "verifying", j.path).message());
  }
  return report;
}

}  // namespace gfp::store
