// Keeps Fabric Manager and the journal in step: connects, hands FM the journal's active set when
// it waits for one after its own restart, resolves intents left without an outcome, and repairs
// drift both ways. Publishes whether FM is usable and, when it is not, why. Callers hold
// PluginCore's operation lock.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/mapping/module_mapping.h"
#include "engine/engine.h"
#include "plugin/core/change_counter.h"
#include "plugin/core/fabric_port.h"
#include "plugin/core/plugin_clock.h"
#include "plugin/core/saga_runner.h"

namespace gfp::plugin::core {

class FabricSync {
 public:
  // `fabric` is null without --fabric-manager: Sync is then a no-op that returns true.
  FabricSync(engine::Engine& engine, FabricPort* fabric, SagaRunner& sagas, ChangeCounter& changes,
             const Clock& clock, const std::optional<adapters::mapping::ModuleMapping>& mapping);

  // One sync; returns (and publishes) whether FM is usable. With `pod_holders_known` (a
  // reconciliation pass), `held` are the allocations whose devices a pod holds, so a partition
  // FM lost that no pod holds is not re-activated.
  bool Sync(bool pod_holders_known, const std::vector<sm::AllocationId>& held);

  // The last sync's verdict: FM connected *and* usable (not starting, not waiting for a resync,
  // partitions listed). Connected alone is not enough to advertise its devices as Healthy.
  bool usable() const { return usable_.load(); }
  // Why FM is not usable, for messages: "it is not connected yet" before the first failure.
  std::string problem() const;

 private:
  bool SyncOnce(bool pod_holders_known, const std::vector<sm::AllocationId>& held);
  // Hands FM the journal's active set when it waits for one; false when that failed.
  bool ResyncIfWaiting(Result<std::vector<events::Partition>>& partitions,
                       events::FmResult& failure);
  void RecordConnection(bool connected, const std::string& reason, const events::FmResult& fm);
  // Resolves intents left without an outcome and rejects requests that lost their caller.
  bool ResolveInterrupted(const std::set<sm::PartitionId>& fm_active);
  // A sync problem that repeats on every retry: logged as an error once per change.
  void ReportProblem(const std::string& text);
  void SetProblem(std::string problem);
  void WarnAboutUnknownModules();

  engine::Engine& engine_;
  FabricPort* const fabric_;
  SagaRunner& sagas_;
  ChangeCounter& changes_;
  const Clock& clock_;
  const std::optional<adapters::mapping::ModuleMapping>& mapping_;

  std::atomic<bool> usable_{false};
  mutable std::mutex problem_mu_;
  std::string problem_;
  std::string last_reported_problem_;
  std::map<sm::Bdf, sm::ModuleId> warned_unknown_modules_;
};

}  // namespace gfp::plugin::core
