// Where two states differ, for failure messages (property tests, the engine's debug checks).
#pragma once

#include <string>

#include "statemachine/state.h"

namespace gfp::sm {

// "" when the states are equal; else "differs in " and each difference as a path through
// snapshot.proto's message with both values, e.g. `allocations[alloc-3].status: 1 -> 2`,
// `devices[0000:1b:00.0]: only in expected`. Repeated entries with a key field (bdf, id,
// partition_id) are matched by it, so one added allocation does not shift the others. Built
// from SnapshotOf, so a field added to State and snapshot.proto is compared without code here.
std::string StateDiff(const State& expected, const State& actual);

}  // namespace gfp::sm
