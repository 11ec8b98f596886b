// The journal's events, decoded, for replay. A long read runs a batch ahead of its consumer on a
// thread of its own (store/read_ahead.h): SQLite's reading of the next events then overlaps the
// decoding and applying of these on a second core, instead of preceding it.
#pragma once

#include <cstdint>
#include <functional>

#include "common/status.h"
#include "statemachine/events.pb.h"
#include "store/journal.h"

namespace gfp::engine {

// Fewer events than this are read on the calling thread: starting a thread costs more than it
// saves.
inline constexpr std::uint64_t kReadAheadAtLeast = 4096;

using DecodedEventFn = std::function<Status(const store::StoredEvent&, const events::Event&)>;

// Calls fn for each event from_seq..to_seq (to_seq 0 = to the end), decoded, in seq order, on
// the calling thread, as journal.ForEach (with `verified`, ForEachVerified) reads them: every
// event before a read error and then that error. An event that does not decode is DataLoss
// naming its seq, after the events before it. fn's first failed Status stops the read and is
// returned. Any reading thread has ended when this returns; the caller must not use `journal`
// until then.
Status ForEachDecoded(const store::Journal& journal, std::uint64_t from_seq, std::uint64_t to_seq,
                      bool verified, const DecodedEventFn& fn);

}  // namespace gfp::engine
