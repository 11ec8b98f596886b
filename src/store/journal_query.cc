// Filtered reads through the schema-2 indexes (event_subjects, events_by_time): what
// `journal history --partition/--device/--since` asks, without decoding every event.
#include <sqlite3.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "store/hash_chain.h"
#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"
#include "store/statement.h"
#include "store/transaction.h"

namespace gfp::store {
namespace {

// Past this many matches by time alone, a sequential scan is cheaper than seq lookups.
constexpr std::size_t kTimeIndexLimit = 200'000;

Status DamagedIn(const std::string& journal_name, std::uint64_t seq, const std::string& reason) {
  return DataLoss("journal " + journal_name + " is damaged at seq " + std::to_string(seq) + ": " +
                  reason + "; run `gpu-fabric-plugin journal verify` for details");
}

Status Damaged(const Journal::Impl& j, std::uint64_t seq, const std::string& reason) {
  return DamagedIn(j.name(), seq, reason);
}

using LinkedEventSink = Journal::LinkedEventSink;

// Fills *ev from a row whose stored hash is 32 bytes (DataLoss otherwise); its hash is not
// re-computed here (CheckEventLink).
Status EventOfRow(const Journal::Impl& j, const EventRow& row, StoredEvent* ev) {
  const auto seq = static_cast<std::uint64_t>(row.seq);
  if (!ToHash(row.hash, &ev->hash)) {
    return Damaged(j, seq,
                   "its hash is " + std::to_string(row.hash.size()) + " bytes, expected 32");
  }
  ev->seq = seq;
  ev->time_unix_micros = row.time_unix_micros;
  ev->type.assign(row.type);
  ev->payload.assign(row.payload);
  return Status::Ok();
}

// The stored hash of seq-1 (the zero hash for seq 1).
Result<Hash> PredecessorHash(Journal::Impl& j, std::uint64_t seq) {
  if (seq <= 1) return kZeroHash;
  GFP_ASSIGN_OR_RETURN(std::optional<Hash> prev, j.EventHashAt(seq - 1));
  if (!prev) return Damaged(j, seq - 1, "event seq " + std::to_string(seq - 1) + " is missing");
  return *prev;
}

// Events from..to in order, contiguous and chained from the stored hash of from-1; fn gets those
// with time_us >= since with their predecessor's stored hash (its check is fn's), the others are
// checked here.
Status ScanChecked(Journal::Impl& j, std::uint64_t from, std::uint64_t to, std::int64_t since,
                   const LinkedEventSink& fn) {
  GFP_ASSIGN_OR_RETURN(Hash prev, PredecessorHash(j, from));
  std::uint64_t expected = from;
  StoredEvent ev;
  const Status scanned =
      j.ScanRows(ToSqlSeq(from), ToSqlSeq(to), [&](const EventRow& row) -> Status {
        if (static_cast<std::uint64_t>(row.seq) != expected) {
          return Damaged(j, expected, "event seq " + std::to_string(expected) + " is missing");
        }
        if (Status bad = EventOfRow(j, row, &ev); !bad.ok()) return bad;
        // One not passed on is checked here: the whole run stays checked, as ForEachVerified's.
        Status passed = row.time_unix_micros >= since
                            ? fn(ev, prev)
                            : CheckEventLink(j.hasher, j.name(), ev, prev);
        prev = ev.hash;
        ++expected;
        return passed;
      });
  GFP_RETURN_IF_ERROR(scanned);
  if (to != std::numeric_limits<std::uint64_t>::max() && expected <= to) {
    return Damaged(j, expected, "event seq " + std::to_string(expected) + " is missing");
  }
  return Status::Ok();
}

Status IndexNamesMissing(const Journal::Impl& j, std::int64_t seq) {
  return Damaged(j, static_cast<std::uint64_t>(seq),
                 "the index names event seq " + std::to_string(seq) + ", which is missing");
}

// Visits the consecutive seqs first..last with one range read that starts at first's
// predecessor, checking each event against the stored hash of the one before it.
Status VisitRun(Journal::Impl& j, std::int64_t first, std::int64_t last,
                const LinkedEventSink& fn) {
  Hash prev = kZeroHash;
  bool have_prev = first <= 1;
  std::int64_t expected = first;
  StoredEvent ev;
  const Status read = j.ScanRows(first - 1, last, [&](const EventRow& row) -> Status {
    if (row.seq == first - 1) {
      have_prev = ToHash(row.hash, &prev);  // a bad hash fails the check below
      return Status::Ok();
    }
    if (!have_prev) {
      return Damaged(j, static_cast<std::uint64_t>(first - 1),
                     "event seq " + std::to_string(first - 1) + " is missing");
    }
    if (row.seq != expected) return IndexNamesMissing(j, expected);
    if (Status bad = EventOfRow(j, row, &ev); !bad.ok()) return bad;
    Status passed = fn(ev, prev);
    prev = ev.hash;
    ++expected;
    return passed;
  });
  GFP_RETURN_IF_ERROR(read);
  return expected <= last ? IndexNamesMissing(j, expected) : Status::Ok();
}

// Visits the seqs (ascending) a run of consecutive ones at a time: the events since a time are
// mostly consecutive, so one B-tree descent serves several.
Status VisitSeqs(Journal::Impl& j, const std::vector<std::int64_t>& seqs,
                 const LinkedEventSink& fn) {
  for (std::size_t i = 0; i < seqs.size();) {
    std::size_t end = i + 1;
    while (end < seqs.size() && seqs[end] == seqs[end - 1] + 1) ++end;
    GFP_RETURN_IF_ERROR(VisitRun(j, seqs[i], seqs[end - 1], fn));
    i = end;
  }
  return Status::Ok();
}

// Collects the int64 first column of a query with ?1..?n bound to `args`; false when more than
// `limit` rows match.
Result<bool> CollectSeqs(Journal::Impl& j, const char* sql, const std::vector<std::int64_t>& args,
                         std::size_t limit, std::vector<std::int64_t>* out) {
  GFP_ASSIGN_OR_RETURN(PreparedStatement stmt,
                       PreparedStatement::Prepare(j.handle(), sql, false, j.path));
  for (std::size_t i = 0; i < args.size(); ++i) {
    sqlite3_bind_int64(stmt.get(), static_cast<int>(i + 1), args[i]);
  }
  for (;;) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) return true;
    if (rc != SQLITE_ROW) return SqliteStatus(rc, j.handle(), "reading the event index", j.path);
    if (out->size() >= limit) return false;
    out->push_back(sqlite3_column_int64(stmt.get(), 0));
  }
}

Result<std::optional<std::int64_t>> SubjectIdOf(Journal::Impl& j, const std::string& tag) {
  GFP_ASSIGN_OR_RETURN(PreparedStatement stmt,
                       PreparedStatement::Prepare(
                           j.handle(), "SELECT id FROM subjects WHERE tag = ?1", false, j.path));
  sqlite3_bind_text64(stmt.get(), 1, tag.data(), tag.size(), SQLITE_STATIC, SQLITE_UTF8);
  const int rc = sqlite3_step(stmt.get());
  if (rc == SQLITE_DONE) return std::optional<std::int64_t>();
  if (rc != SQLITE_ROW) return SqliteStatus(rc, j.handle(), "reading subjects", j.path);
  return std::optional<std::int64_t>(sqlite3_column_int64(stmt.get(), 0));
}

// The subject's events with seq >= from and time >= since, each with its predecessor's stored
// hash, from one statement: SQLite walks the subject's index rows and steps its event cursors
// forward, where a statement per run of seqs (VisitSeqs) would be reset and rebound and descend
// the events B-tree from its root for each run (158,414 runs for 396,035 events in a 10 M-event
// journal).
constexpr char kSubjectEventsSql[] =
    "SELECT es.seq, e.seq, e.time_us, e.type, e.payload, e.hash, p.hash "
    "FROM event_subjects es "
    "LEFT JOIN events e ON e.seq = es.seq "
    "LEFT JOIN events p ON p.seq = es.seq - 1 "
    "WHERE es.subject_id = ?1 AND es.seq >= ?2 AND es.time_us >= ?3 ORDER BY es.seq";

// The stored hash of seq-1 from column `column` of the current row (the zero hash for seq 1).
Status PredecessorHashOfRow(const Journal::Impl& j, sqlite3_stmt* stmt, int column,
                            std::int64_t seq, Hash* prev) {
  if (seq <= 1) {
    *prev = kZeroHash;
    return Status::Ok();
  }
  const auto before = static_cast<std::uint64_t>(seq - 1);
  if (sqlite3_column_type(stmt, column) == SQLITE_NULL) {
    return Damaged(j, before, "event seq " + std::to_string(before) + " is missing");
  }
  const std::string_view stored = ColumnView(stmt, column);
  if (!ToHash(stored, prev)) {
    return Damaged(j, before,
                   "its hash is " + std::to_string(stored.size()) + " bytes, expected 32");
  }
  return Status::Ok();
}

Status VisitSubjectEvents(Journal::Impl& j, std::int64_t subject_id, std::uint64_t from,
                          std::int64_t since, const LinkedEventSink& fn) {
  GFP_ASSIGN_OR_RETURN(PreparedStatement stmt,
                       PreparedStatement::Prepare(j.handle(), kSubjectEventsSql, false, j.path));
  sqlite3_bind_int64(stmt.get(), 1, subject_id);
  sqlite3_bind_int64(stmt.get(), 2, ToSqlSeq(from));
  sqlite3_bind_int64(stmt.get(), 3, since);
  EventRow row;
  Hash prev = kZeroHash;
  StoredEvent ev;
  for (;;) {
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc != SQLITE_ROW) return SqliteStatus(rc, j.handle(), "reading events", j.path);
    row.seq = sqlite3_column_int64(stmt.get(), 0);
    if (sqlite3_column_type(stmt.get(), 1) == SQLITE_NULL) return IndexNamesMissing(j, row.seq);
    GFP_RETURN_IF_ERROR(PredecessorHashOfRow(j, stmt.get(), 6, row.seq, &prev));
    row.time_unix_micros = sqlite3_column_int64(stmt.get(), 2);
    row.type = ColumnView(stmt.get(), 3);
    row.payload = ColumnView(stmt.get(), 4);
    row.hash = ColumnView(stmt.get(), 5);
    GFP_RETURN_IF_ERROR(EventOfRow(j, row, &ev));
    GFP_RETURN_IF_ERROR(fn(ev, prev));
  }
}

// The indexed part (seq >= from): through the subject's rows, or the time index, or a scan.
Status MatchIndexed(Journal::Impl& j, std::uint64_t from, const EventFilter& filter,
                    const LinkedEventSink& fn) {
  if (!filter.subject.empty()) {
    GFP_ASSIGN_OR_RETURN(std::optional<std::int64_t> id, SubjectIdOf(j, filter.subject));
    if (!id) return Status::Ok();
    return VisitSubjectEvents(j, *id, from, filter.since_time_us, fn);
  }
  if (filter.since_time_us != std::numeric_limits<std::int64_t>::min()) {
    std::vector<std::int64_t> seqs;
    GFP_ASSIGN_OR_RETURN(
        bool all, CollectSeqs(j,
                              "SELECT seq FROM events INDEXED BY events_by_time "
                              "WHERE time_us >= ?1 AND seq >= ?2",
                              {filter.since_time_us, ToSqlSeq(from)}, kTimeIndexLimit, &seqs));
    if (all) {
      std::sort(seqs.begin(), seqs.end());
      return VisitSeqs(j, seqs, fn);
    }
  }
  return ScanChecked(j, from, std::numeric_limits<std::uint64_t>::max(), filter.since_time_us, fn);
}

// ForEachMatching's reading, under the journal's CallGuard.
Status ForEachMatchingLinked(Journal::Impl& j, const EventFilter& filter,
                             const LinkedEventSink& fn) {
  if (!fn) return InvalidArgument("reading journal " + j.name() + ": no callback given");
  try {
    // One read transaction: the index and the events are seen as of one moment.
    GFP_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(j.handle(), Transaction::Kind::kRead,
                                                             "reading events", j.path));
    GFP_ASSIGN_OR_RETURN(std::uint64_t from, j.SubjectsFromSeq());
    if (from > 1) GFP_RETURN_IF_ERROR(ScanChecked(j, 1, from - 1, filter.since_time_us, fn));
    if (j.schema_version < kFirstIndexedSchema) return Status::Ok();
    return MatchIndexed(j, from, filter, fn);
  } catch (const std::exception& e) {
    return StatusFromException(e, "reading events", j.path);
  }
}

}  // namespace

Result<std::uint64_t> Journal::SubjectsFrom() const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  try {
    return impl_->SubjectsFromSeq();
  } catch (const std::exception& e) {
    return StatusFromException(e, "reading journal_meta", impl_->path);
  }
}

Status CheckEventLink(ChainHasher& hasher, const std::string& journal_name,
                      const StoredEvent& event, const Hash& predecessor) {
  GFP_ASSIGN_OR_RETURN(
      Hash computed,
      hasher.EventHash(predecessor, event.seq, event.time_unix_micros, event.type, event.payload));
  if (computed == event.hash) return Status::Ok();
  return DamagedIn(journal_name, event.seq,
                   "stored hash " + HashToHex(event.hash) + " does not match the recomputed hash " +
                       HashToHex(computed));
}

Status Journal::ForEachMatching(const EventFilter& filter,
                                const std::function<Status(const StoredEvent&)>& fn) const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (!fn) return InvalidArgument("reading journal " + j.name() + ": no callback given");
  return ForEachMatchingLinked(j, filter, [&](const StoredEvent& ev, const Hash& prev) -> Status {
    GFP_RETURN_IF_ERROR(CheckEventLink(j.hasher, j.name(), ev, prev));
    return fn(ev);
  });
}

Status Journal::ForEachMatchingUnchecked(const EventFilter& filter,
                                         const LinkedEventSink& fn) const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  return ForEachMatchingLinked(*impl_, filter, fn);
}

Status Journal::ForEachSubjectRow(
    std::uint64_t from_seq, std::uint64_t up_to_seq,
    const std::function<Status(std::string_view, std::uint64_t, std::int64_t)>& fn) const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (j.schema_version < kFirstIndexedSchema) return Status::Ok();
  try {
    GFP_ASSIGN_OR_RETURN(
        PreparedStatement stmt,
        PreparedStatement::Prepare(j.handle(),
                                   "SELECT s.tag, es.seq, es.time_us FROM event_subjects es "
                                   "LEFT JOIN subjects s ON s.id = es.subject_id "
                                   "WHERE es.seq >= ?1 AND es.seq <= ?2 "
                                   "ORDER BY es.subject_id, es.seq",
                                   false, j.path));
    sqlite3_bind_int64(stmt.get(), 1, ToSqlSeq(from_seq));
    sqlite3_bind_int64(stmt.get(), 2, ToSqlSeq(up_to_seq));
    for (;;) {
      const int rc = sqlite3_step(stmt.get());
      if (rc == SQLITE_DONE) return Status::Ok();
      if (rc != SQLITE_ROW) return SqliteStatus(rc, j.handle(), "reading the event index", j.path);
      const std::int64_t seq = sqlite3_column_int64(stmt.get(), 1);
      GFP_RETURN_IF_ERROR(fn(ColumnView(stmt.get(), 0),
                             seq > 0 ? static_cast<std::uint64_t>(seq) : 0,
                             sqlite3_column_int64(stmt.get(), 2)));
    }
  } catch (const std::exception& e) {
    return StatusFromException(e, "reading the event index", j.path);
  }
}

}  // namespace gfp::store
