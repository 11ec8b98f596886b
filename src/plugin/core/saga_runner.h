// Runs a command as a saga: the engine decides and journals it, then each effect is carried out
// through Fabric Manager (only after its intent is durable) and its outcome fed back as the next
// command, until no effect is left. Callers hold PluginCore's operation lock, so two sagas never
// interleave.
#pragma once

#include <atomic>
#include <string>

#include "common/log_context.h"
#include "common/status.h"
#include "engine/engine.h"
#include "plugin/core/core_observer.h"
#include "plugin/core/fabric_port.h"
#include "plugin/core/plugin_clock.h"

namespace gfp::plugin::core {

struct SagaResult {
  sm::AllocationId allocation_id;
  std::string refusal;
  bool fm_in_use = false;                   // an activation was refused with FM_ST_IN_USE
  ErrorCode refusal_code = ErrorCode::kOk;  // the refusal's error code (sm::RefusalErrorCode)
};

class SagaRunner {
 public:
  // `fabric` is null without --fabric-manager: effects are then answered NOT_SUPPORTED.
  SagaRunner(engine::Engine& engine, FabricPort* fabric, const Clock& clock,
             const std::atomic<CoreObserver*>& observer);

  // Executes `command` and every effect it leads to, feeding outcomes back. Journal failures
  // are returned as errors; refusals come back in SagaResult.
  Result<SagaResult> Run(const sm::Command& command);

  // Executes one command and logs what it journaled: drift as a warning (and its metric),
  // everything else at debug level.
  Result<sm::Decision> ExecuteLogged(const sm::Command& command);

  // Set when a journal append failed between an intent and its outcome: what the next sync
  // rejects is then told that cause instead of "the plugin stopped" (it did not).
  const std::string& interrupted_cause() const { return interrupted_cause_; }
  void ClearInterruptedCause() { interrupted_cause_.clear(); }

 private:
  // Carries out one effect through FM (or answers NOT_SUPPORTED without FM).
  events::FmResult Carry(const sm::Effect& effect, ScopedLogContext& effect_scope,
                         SagaResult& result);

  engine::Engine& engine_;
  FabricPort* const fabric_;
  const Clock& clock_;
  const std::atomic<CoreObserver*>& observer_;
  std::string interrupted_cause_;
};

// "FM_ST_IN_USE (message)", or "code N" when FM's code has no name: for logs and messages.
std::string FmOutcomeText(const events::FmResult& fm);

}  // namespace gfp::plugin::core
