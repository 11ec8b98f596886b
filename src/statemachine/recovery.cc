#include "statemachine/recovery.h"

namespace gfp::sm {

std::vector<RecordFabricManagerOutcome> ResolvePendingIntents(
    const State& state, const std::set<PartitionId>& fm_active, Micros now,
    const std::string& cause) {
  std::vector<RecordFabricManagerOutcome> out;
  for (const auto& [pid, intent] : state.intents) {
    const bool active = fm_active.count(pid) > 0;
    const bool applied = (intent.kind == IntentKind::kActivate) == active;
    RecordFabricManagerOutcome outcome;
    outcome.now = now;
    outcome.kind = intent.kind;
    outcome.partition_id = pid;
    outcome.interrupted = true;
    outcome.interrupted_cause = cause;
    const std::string seen = "recovered after " + (cause.empty() ? "restart" : cause) +
                             ": Fabric Manager reports partition " + std::to_string(pid) +
                             (active ? " active" : " inactive") + " for the " +
                             IntentKindName(intent.kind) + " requested at seq " +
                             std::to_string(intent.requested_seq);
    if (applied) {
      outcome.fm.set_code(0);
      outcome.fm.set_name("FM_ST_SUCCESS");
    } else {
      outcome.fm.set_code(kRecoveredNotAppliedCode);
      outcome.fm.set_name(kRecoveredNotAppliedName);
    }
    outcome.fm.set_message(seen);
    out.push_back(std::move(outcome));
  }
  return out;
}

}  // namespace gfp::sm
