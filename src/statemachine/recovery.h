// Start-up recovery of transitions journaled as requested but without an outcome (a crash or a
// lost FM answer between intent and outcome). Fabric Manager is asked which partitions are
// active and each pending intent is closed according to docs/recovery.md:
//
// The outcome is what FM's state says happened; an allocation that was waiting on it is rejected
// (its kubelet caller is gone). The full decision table, one test per row, is docs/recovery.md.
#pragma once

#include <set>
#include <vector>

#include "statemachine/commands.h"
#include "statemachine/state.h"

namespace gfp::sm {

inline constexpr int kRecoveredNotAppliedCode = -2;
inline constexpr const char* kRecoveredNotAppliedName = "RECOVERED_NOT_APPLIED";

// One outcome per pending intent, in partition order. `cause` says why the intents were left
// without an outcome when the plugin did not restart (e.g. "journaling an outcome failed: …");
// empty means a restart.
std::vector<RecordFabricManagerOutcome> ResolvePendingIntents(
    const State& state, const std::set<PartitionId>& fm_active, Micros now,
    const std::string& cause = "");

}  // namespace gfp::sm
