// Properties every reachable state has. Tests check them after every apply; `journal verify`
// checks them after replay.
#pragma once

#include "common/status.h"
#include "statemachine/state.h"

namespace gfp::sm {

// OK, or the first violated invariant in words.
Status CheckInvariants(const State& state);

}  // namespace gfp::sm
