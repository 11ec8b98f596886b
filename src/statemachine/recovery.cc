#include "statemachine/recovery.h"

#include "fm_codes/fm_codes.h"

namespace gfp::sm {

events::FmResult RecoveredNotAppliedResult(const std::string& message) {
  events::FmResult fm;
  fm.set_origin(events::FmResult::ORIGIN_RECOVERED_NOT_APPLIED);
  fm.set_name(kRecoveredNotAppliedName);
  fm.set_message(message);
  return fm;
}

bool RecoveredNotApplied(const events::FmResult& fm) {
  if (fm.origin() == events::FmResult::ORIGIN_RECOVERED_NOT_APPLIED) return true;
  return fm.origin() == events::FmResult::ORIGIN_FABRIC_MANAGER &&
         fm.code() == kLegacyRecoveredNotAppliedCode && fm.name() == kRecoveredNotAppliedName;
}

bool FmCallSucceeded(const events::FmResult& fm) {
  return !RecoveredNotApplied(fm) && fm.code() == fm_codes::kSuccess;
}

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
      outcome.fm.set_code(fm_codes::kSuccess);
      outcome.fm.set_name(fm_codes::Name(fm_codes::kSuccess));
      outcome.fm.set_message(seen);
    } else {
      outcome.fm = RecoveredNotAppliedResult(seen);
    }
    out.push_back(std::move(outcome));
  }
  return out;
}

}  // namespace gfp::sm
