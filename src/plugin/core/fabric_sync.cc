#include "plugin/core/fabric_sync.h"

#include <spdlog/spdlog.h>

#include "common/log_context.h"
#include "common/text_escape.h"
#include "fm_codes/fm_codes.h"
#include "plugin/core/log_scope.h"
#include "plugin/core/log_text.h"
#include "statemachine/recovery.h"

namespace gfp::plugin::core {

FabricSync::FabricSync(engine::Engine& engine, FabricPort* fabric, SagaRunner& sagas,
                       ChangeCounter& changes, const Clock& clock,
                       const std::optional<adapters::mapping::ModuleMapping>& mapping)
    : engine_(engine),
      fabric_(fabric),
      sagas_(sagas),
      changes_(changes),
      clock_(clock),
      mapping_(mapping) {}

bool FabricSync::Sync(bool pod_holders_known, const std::vector<sm::AllocationId>& held) {
  if (!fabric_) return true;
  const bool usable = SyncOnce(pod_holders_known, held);
  if (usable_.exchange(usable) != usable) changes_.Bump();
  return usable;
}

bool FabricSync::SyncOnce(bool pod_holders_known, const std::vector<sm::AllocationId>& held) {
  if (!fabric_->connected()) {
    events::FmResult connect = fabric_->Connect();
    if (connect.code() != 0) {
      SetProblem("cannot connect to " + fabric_->address() + ": " + FmOutcomeText(connect));
      RecordConnection(false, "connect failed", connect);
      return false;
    }
  }
  events::FmResult failure;
  auto partitions = fabric_->FabricState(&failure);
  if (!ResyncIfWaiting(partitions, failure)) return false;
  if (!partitions.ok()) {
    SetProblem("listing its partitions failed: " + FmOutcomeText(failure));
    RecordConnection(false, "listing partitions failed", failure);
    return false;
  }
  RecordConnection(true, "", {});

  std::set<sm::PartitionId> fm_active;
  for (const auto& p : *partitions) {
    if (p.active()) fm_active.insert(p.id());
  }
  if (!ResolveInterrupted(fm_active)) return false;
  sm::ObserveFabricState observed;
  observed.now = clock_();
  observed.partitions = std::move(partitions).value();
  observed.pod_holders_known = pod_holders_known;
  observed.held_allocations = held;
  const std::uint64_t seq_before = engine_.Read([](const sm::State& s) { return s.last_seq; });
  auto repaired = sagas_.Run(observed);
  // A new table, a degraded partition or a repair changes what DRA's slice says (SPEC §11:
  // republished within 1 s): whatever was journaled wakes who waits on the device view.
  if (engine_.Read([](const sm::State& s) { return s.last_seq; }) != seq_before) changes_.Bump();
  if (!repaired.ok()) {
    ReportProblem("journaling Fabric Manager's state: " + repaired.status().message());
    return false;
  }
  if (!repaired->refusal.empty()) spdlog::warn("{}", repaired->refusal);
  last_reported_problem_.clear();
  WarnAboutUnknownModules();
  if (!fabric_->connected()) return false;
  SetProblem("");
  return true;
}

bool FabricSync::ResyncIfWaiting(Result<std::vector<events::Partition>>& partitions,
                                 events::FmResult& failure) {
  if (partitions.ok() || failure.code() != fm_codes::kNotConfigured) return true;
  // FM is starting, or restarted in resiliency mode and waits for the active set.
  RecordConnection(true, "", {});
  auto resync = sagas_.Run(sm::ResyncFabricManager{clock_()});
  if (!resync.ok() || !resync->refusal.empty()) {
    const std::string why = resync.ok() ? resync->refusal : resync.status().message();
    SetProblem("it is not ready yet: " + why);
    spdlog::info("Fabric Manager not ready yet: {}", why);
    return false;
  }
  spdlog::info("Fabric Manager resynced with the journal's active partitions");
  partitions = fabric_->FabricState(&failure);
  return true;
}

void FabricSync::RecordConnection(bool connected, const std::string& reason,
                                  const events::FmResult& fm) {
  ScopedLogContext fm_scope;
  fm_scope.FmCode(fm.name());
  sm::ObserveFabricManagerConnection c;
  c.now = clock_();
  c.connected = connected;
  c.address = fabric_->address();
  c.connect_params_version = static_cast<std::uint32_t>(fabric_->connect_struct_version());
  c.reason = reason;
  c.fm = fm;
  auto d = engine_.Execute(c);
  if (!d.ok()) {
    spdlog::error("journaling the Fabric Manager connection state: {}", d.status().message());
    return;
  }
  if (d->events.empty()) return;
  if (connected) {
    spdlog::info("connected to Fabric Manager at {}", fabric_->address());
  } else {
    spdlog::warn("Fabric Manager at {} unreachable: {}; its devices are Unhealthy",
                 fabric_->address(), LogText(fm.message().empty() ? reason : fm.message(), 512));
  }
  changes_.Bump();
}

bool FabricSync::ResolveInterrupted(const std::set<sm::PartitionId>& fm_active) {
  // Intents left without an outcome: a crash, or a failed journal append, between the FM call
  // and its journaling.
  for (const auto& outcome : sm::ResolvePendingIntents(engine_.CopyState(), fm_active, clock_(),
                                                       sagas_.interrupted_cause())) {
    ScopedLogContext intent_scope;
    AddPartition(intent_scope, engine_, outcome.partition_id);
    intent_scope.FmCode(outcome.fm.name());
    auto resolved = sagas_.Run(outcome);
    if (!resolved.ok()) {
      ReportProblem("cannot journal the resolution of the pending " +
                    std::string(sm::IntentKindName(outcome.kind)) + " of partition " +
                    std::to_string(outcome.partition_id) +
                    " (retrying): " + resolved.status().message());
      return false;
    }
    spdlog::warn("{}", outcome.fm.message());
  }
  auto abandoned =
      sagas_.ExecuteLogged(sm::AbandonInterruptedRequests{clock_(), sagas_.interrupted_cause()});
  if (!abandoned.ok()) {
    ReportProblem("cannot journal the rejection of interrupted requests (retrying): " +
                  abandoned.status().message());
    return false;
  }
  sagas_.ClearInterruptedCause();
  return true;
}

void FabricSync::ReportProblem(const std::string& text) {
  SetProblem(text);
  if (text == last_reported_problem_) {
    spdlog::debug("{}", text);
    return;
  }
  spdlog::error("{}", text);
  last_reported_problem_ = text;
}

void FabricSync::SetProblem(std::string problem) {
  std::lock_guard lock(problem_mu_);
  problem_ = std::move(problem);
}

std::string FabricSync::problem() const {
  std::lock_guard lock(problem_mu_);
  return problem_.empty() ? "it is not connected yet" : problem_;
}

void FabricSync::WarnAboutUnknownModules() {
  auto unknown =
      engine_.Read([](const sm::State& s) { return sm::GpusWithModulesUnknownToFabricManager(s); });
  if (unknown == warned_unknown_modules_) return;
  for (const auto& [bdf, module] : unknown) {
    auto before = warned_unknown_modules_.find(bdf);
    if (before != warned_unknown_modules_.end() && before->second == module) continue;
    spdlog::warn(
        "GPU {} is mapped to module {} in {}, which Fabric Manager's partition table does not "
        "have: advertised Unhealthy, it can never be allocated (fix the module mapping file)",
        bdf, module, mapping_ ? EscapeControl(mapping_->source) : std::string("the mapping"));
  }
  warned_unknown_modules_ = std::move(unknown);
  changes_.Bump();
}

}  // namespace gfp::plugin::core
