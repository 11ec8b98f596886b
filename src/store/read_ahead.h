// A read of journal events that runs a batch ahead of its consumer on a thread of its own: the
// reading (SQLite, the hash checks) of the next events overlaps the consumer's work on these
// (decoding, applying, printing) on a second core, instead of preceding it. ReadAheadChecked
// moves the hash checks to the consumer's side, where a filtered history has the time for them.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "store/journal.h"
#include "store/journal_types.h"

namespace gfp::store {

using EventSink = std::function<Status(const StoredEvent&)>;
// A read that calls its sink for each event in order, and returns how it ended (a Journal
// ForEach* call, bound to its arguments).
using EventRead = std::function<Status(const EventSink&)>;

// Runs `read` on a thread of its own and calls fn, on the calling thread, for each event it
// gives, in order: every event before the read's error and then that error, as the read alone
// would. fn's first failed Status stops the read and is returned. The reading thread has ended
// when this returns; the journal read must not be used by the caller until then. Reads on the
// calling thread when no thread can be started.
Status ReadAhead(const EventRead& read, const EventSink& fn);

// A read that gives each event unchecked, with its predecessor's stored hash
// (Journal::ForEachMatchingUnchecked, bound to its filter).
using LinkedEventRead = std::function<Status(const Journal::LinkedEventSink&)>;

// ReadAhead for such a read, with each event's hash-chain check (CheckEventLink, against
// journal `journal_name`) done on the calling thread before fn gets the event: the check then
// runs beside the reading (SQLite's B-tree walks), the slower side of a filtered history,
// instead of after it. The first failed check stops the read and is returned; fn has had every
// event before it.
Status ReadAheadChecked(const LinkedEventRead& read, const std::string& journal_name,
                        const EventSink& fn);

}  // namespace gfp::store
