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
#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

inline constexpr const char* kRecoveredNotAppliedName = "RECOVERED_NOT_APPLIED";
// Journals before FmResult.origin marked "recovered as not applied" with FM's GENERIC_ERROR
// number and the name above. Read only, never written.
inline constexpr int kLegacyRecoveredNotAppliedCode = -2;

// The outcome recovery records for a call FM's state shows did not take effect.
events::FmResult RecoveredNotAppliedResult(const std::string& message);

// True for a recovered-as-not-applied result in either form (origin, or the older code -2 with
// its name); false for every answer of Fabric Manager, FM_ST_GENERIC_ERROR included.
bool RecoveredNotApplied(const events::FmResult& fm);

// The call took effect as FM reported it: FM_ST_SUCCESS from Fabric Manager itself.
bool FmCallSucceeded(const events::FmResult& fm);

// One outcome per pending intent, in partition order. `cause` says why the intents were left
// without an outcome when the plugin did not restart (e.g. "journaling an outcome failed: …");
// empty means a restart.
std::vector<RecordFabricManagerOutcome> ResolvePendingIntents(
    const State& state, const std::set<PartitionId>& fm_active, Micros now,
    const std::string& cause = "");

}  // namespace gfp::sm
