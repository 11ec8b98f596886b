#include "plugin/core/saga_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/strings.h"
#include "fm_codes/fm_codes.h"
#include "journal_text/event_summary.h"
#include "plugin/core/log_scope.h"
#include "plugin/core/log_text.h"
#include "statemachine/event_codec.h"
#include "statemachine/recovery.h"

namespace gfp::plugin::core {
namespace {

const char* EffectName(sm::Effect::Kind kind) {
  switch (kind) {
    case sm::Effect::Kind::kActivatePartition:
      return "activate";
    case sm::Effect::Kind::kDeactivatePartition:
      return "deactivate";
    case sm::Effect::Kind::kSetActivatedPartitions:
      return "set activated partitions";
  }
  return "?";
}

std::string EffectTarget(const sm::Effect& effect) {
  if (effect.kind != sm::Effect::Kind::kSetActivatedPartitions) {
    return "partition " + std::to_string(effect.partition_id);
  }
  return "[" + Join(effect.partition_ids) + "]";
}

// Observer (metrics): one FM call that changes partitions.
void RecordPartitionOperation(CoreObserver* m, sm::Effect::Kind kind, const events::FmResult& fm) {
  if (!m) return;
  using Op = PartitionOperation;
  const Op op = kind == sm::Effect::Kind::kActivatePartition     ? Op::kActivate
                : kind == sm::Effect::Kind::kDeactivatePartition ? Op::kDeactivate
                                                                 : Op::kResync;
  m->RecordPartitionOperation(op, sm::FmCallSucceeded(fm),
                              fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name());
}

// Observer (metrics): drift found against FM.
void RecordDrift(CoreObserver* m, const events::DriftDetected& drift) {
  if (!m) return;
  if (drift.kind() == events::DriftDetected::KIND_ACTIVE_IN_FM_ONLY) {
    m->RecordDrift(DriftKind::kActivatedElsewhere);
  } else if (drift.kind() == events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY) {
    m->RecordDrift(DriftKind::kLost);
  }
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

std::string FmOutcomeText(const events::FmResult& fm) {
  std::string text = fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name();
  if (!fm.message().empty()) text += " (" + LogText(fm.message(), 256) + ")";
  return text;
}

SagaRunner::SagaRunner(engine::Engine& engine, FabricPort* fabric, const Clock& clock,
                       const std::atomic<CoreObserver*>& observer)
    : engine_(engine), fabric_(fabric), clock_(clock), observer_(observer) {}

Result<sm::Decision> SagaRunner::ExecuteLogged(const sm::Command& command) {
  auto decision = engine_.Execute(command);
  if (!decision.ok()) return decision;
  for (const auto& event : decision->events) {
    ScopedLogContext event_scope;
    if (event.has_drift_detected() || spdlog::should_log(spdlog::level::debug)) {
      engine_.Read([&](const sm::State& s) {
        AddEvent(event_scope, s, event);
        return 0;
      });
    }
    if (event.has_drift_detected()) {
      RecordDrift(observer_.load(), event.drift_detected());
      spdlog::warn("drift found: {}", LogText(event.drift_detected().detail(), 512));
    } else if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("journaled {}: {}", sm::EventTypeName(event),
                    LogText(journal_text::SummarizeEvent(event), 512));
    }
  }
  return decision;
}

events::FmResult SagaRunner::Carry(const sm::Effect& effect, ScopedLogContext& effect_scope,
                                   SagaResult& result) {
  events::FmResult outcome;
  if (!fabric_) {
    outcome.set_code(fm_codes::kNotSupported);
    outcome.set_name(fm_codes::Name(fm_codes::kNotSupported));
    outcome.set_message("Fabric Manager management is disabled");
    effect_scope.FmCode(outcome.name());
    return outcome;
  }
  const auto started = std::chrono::steady_clock::now();
  outcome = fabric_->Carry(effect);
  effect_scope.FmCode(outcome.name());
  RecordPartitionOperation(observer_.load(), effect.kind, outcome);
  spdlog::debug("Fabric Manager {} {}: {} in {:.1f} ms", EffectName(effect.kind),
                EffectTarget(effect), FmOutcomeText(outcome), MillisSince(started));
  result.fm_in_use |=
      effect.kind == sm::Effect::Kind::kActivatePartition && outcome.code() == fm_codes::kInUse;
  return outcome;
}

Result<SagaResult> SagaRunner::Run(const sm::Command& command) {
  GFP_ASSIGN_OR_RETURN(sm::Decision decision, ExecuteLogged(command));
  SagaResult result{decision.allocation_id, decision.refusal, false,
                    sm::RefusalErrorCode(decision)};
  ScopedLogContext saga_scope;
  AddAllocation(saga_scope, engine_, decision.allocation_id);
  std::vector<sm::Effect> effects = std::move(decision.effects);
  for (std::size_t i = 0; i < effects.size(); ++i) {
    const sm::Effect effect = effects[i];
    ScopedLogContext effect_scope;
    if (effect.kind != sm::Effect::Kind::kSetActivatedPartitions) {
      AddPartition(effect_scope, engine_, effect.partition_id);
    }
    const events::FmResult outcome = Carry(effect, effect_scope, result);
    // If this append fails the intent stays without an outcome: the next sync resolves it by
    // asking FM, and tells the request it rejects what happened.
    auto executed = ExecuteLogged(sm::OutcomeOf(effect, clock_(), outcome));
    if (!executed.ok()) {
      interrupted_cause_ = "the journal append failed (" + executed.status().message() + ")";
      spdlog::error("journaling the outcome of Fabric Manager {} {} ({}) failed: {}",
                    EffectName(effect.kind), EffectTarget(effect), FmOutcomeText(outcome),
                    executed.status().message());
      return executed.status();
    }
    sm::Decision followed = std::move(executed).value();
    if (!followed.refusal.empty()) {
      result.refusal = followed.refusal;
      result.refusal_code = sm::RefusalErrorCode(followed);
    }
    effects.insert(effects.end(), followed.effects.begin(), followed.effects.end());
  }
  return result;
}

}  // namespace gfp::plugin::core
