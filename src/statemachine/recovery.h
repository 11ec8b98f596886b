// Start-up recovery of transitions journaled as requested but without an outcome (a crash or a
// lost FM answer between intent and outcome). Fabric Manager is asked which partitions are
// active and each pending intent is closed according to docs/recovery.md:
//
//   intent      FM reports p   recorded outcome                      why
//   activate    active         success                               the call took effect
//   activate    inactive       failure RECOVERED_NOT_APPLIED         it did not; kubelet, which
//                                                                    never got an answer, retries
//   deactivate  inactive       success                               the call took effect
//   deactivate  active         failure RECOVERED_NOT_APPLIED         it did not; the partition is
//                                                                    ownerless and released later
#pragma once

#include <set>
#include <vector>

#include "statemachine/commands.h"
#include "statemachine/state.h"

namespace gfp::sm {

inline constexpr int kRecoveredNotAppliedCode = -2;
inline constexpr const char* kRecoveredNotAppliedName = "RECOVERED_NOT_APPLIED";

// One outcome per pending intent, in partition order.
std::vector<RecordFabricManagerOutcome> ResolvePendingIntents(
    const State& state, const std::set<PartitionId>& fm_active, Micros now);

}  // namespace gfp::sm
