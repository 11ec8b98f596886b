// The replay path: a prepared range scan handing each row to the caller without re-allocating
// (the StoredEvent's strings keep their capacity between rows).
#include <exception>
#include <limits>
#include <string>

#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"

namespace gfp::store {

Status Journal::ForEach(std::uint64_t from_seq, std::uint64_t to_seq,
                        const std::function<Status(const StoredEvent&)>& fn) const {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (to_seq != 0 && from_seq > to_seq) {
    return InvalidArgument("reading journal " + j.name() + ": from_seq " +
                           std::to_string(from_seq) + " is after to_seq " + std::to_string(to_seq));
  }
  if (!fn) return InvalidArgument("reading journal " + j.name() + ": no callback given");
  try {
    StoredEvent ev;
    const std::int64_t from = from_seq == 0 ? 1 : ToSqlSeq(from_seq);
    const std::int64_t to =
        to_seq == 0 ? std::numeric_limits<std::int64_t>::max() : ToSqlSeq(to_seq);
    return j.ScanRows(from, to, [&](const EventRow& row) -> Status {
      ev.seq = static_cast<std::uint64_t>(row.seq);
      ev.time_unix_micros = row.time_unix_micros;
      ev.type.assign(row.type);
      ev.payload.assign(row.payload);
      if (!ToHash(row.hash, &ev.hash)) {
        return DataLoss("event seq " + std::to_string(row.seq) + " of journal " + j.name() +
                        " has a hash of " + std::to_string(row.hash.size()) +
                        " bytes, expected 32");
      }
      // A reader learns about newer events as it sees them (a writer may be appending).
      if (ev.seq > j.last_seq.load(std::memory_order_relaxed)) {
        j.last_seq.store(ev.seq, std::memory_order_relaxed);
      }
      return fn(ev);
    });
  } catch (const std::exception& e) {
    return StatusFromException(e, "reading events", j.path);
  }
}

}  // namespace gfp::store
