// The replay path: a prepared range scan handing each row to the caller without re-allocating
// (the StoredEvent's strings keep their capacity between rows).
#include <exception>
#include <limits>
#include <optional>
#include <string>

#include "store/hash_chain.h"
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

Status Journal::ForEachVerified(std::uint64_t from_seq, std::uint64_t to_seq,
                                const std::function<Status(const StoredEvent&)>& fn) const {
  const std::uint64_t first = from_seq == 0 ? 1 : from_seq;
  const auto damaged = [this](std::uint64_t seq, const std::string& reason) {
    return DataLoss("journal " + impl_->name() + " is damaged at seq " + std::to_string(seq) +
                    ": " + reason + "; run `gpu-fabric-plugin journal verify` for details");
  };
  Hash prev = kZeroHash;
  if (first > 1) {
    std::optional<Hash> anchor;
    {
      CallGuard guard(*impl_);
      GFP_RETURN_IF_ERROR(guard.status());
      try {
        GFP_ASSIGN_OR_RETURN(anchor, impl_->EventHashAt(first - 1));
      } catch (const std::exception& e) {
        return StatusFromException(e, "reading events", impl_->path);
      }
    }
    if (!anchor)
      return damaged(first - 1, "event seq " + std::to_string(first - 1) + " is missing");
    prev = *anchor;
  }
  GFP_ASSIGN_OR_RETURN(ChainHasher hasher, ChainHasher::Create());
  std::uint64_t expected = first;
  GFP_RETURN_IF_ERROR(ForEach(first, to_seq, [&](const StoredEvent& ev) -> Status {
    if (ev.seq != expected) {
      return damaged(expected, "event seq " + std::to_string(expected) +
                                   " is missing (the next stored event has seq " +
                                   std::to_string(ev.seq) + ")");
    }
    GFP_ASSIGN_OR_RETURN(Hash computed,
                         hasher.EventHash(prev, ev.seq, ev.time_unix_micros, ev.type, ev.payload));
    if (computed != ev.hash) {
      return damaged(ev.seq, "stored hash " + HashToHex(ev.hash) +
                                 " does not match the recomputed hash " + HashToHex(computed));
    }
    prev = ev.hash;
    ++expected;
    return fn(ev);
  }));
  if (to_seq != 0 && expected <= to_seq) {
    return damaged(expected, "event seq " + std::to_string(expected) + " is missing");
  }
  return Status::Ok();
}

}  // namespace gfp::store
