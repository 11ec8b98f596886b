// The plugin's behaviour, independent of gRPC: what kubelet's calls do, how Fabric Manager is
// kept in step, health, and reconciliation. Every change goes through the engine (decide ->
// journal -> apply); effects are carried out only after their intent is durable.
//
// Thread safety: all public methods may be called from any thread. Operations that change the
// journal (Allocate, PreStart, reconciliation, FM sync, health) are serialised by one mutex so
// that a multi-step decision chain is never interleaved; reads (device lists, preferred
// allocation) only take the engine's short state lock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/host/allocation_device_specs.h"
#include "adapters/host/module_mapping.h"
#include "adapters/kubelet/pod_device_assignment.h"
#include "common/status.h"
#include "engine/engine.h"
#include "plugin/core/fabric_link.h"
#include "plugin/core/node_inventory.h"
#include "plugin/serve_config.h"
#include "statemachine/release_tracker.h"

namespace gfp::plugin {

namespace metrics {
class MetricsRegistry;
}  // namespace metrics

using Clock = std::function<sm::Micros()>;
sm::Micros SystemClock();

struct DeviceView {
  std::string id;  // BDF, or an mdev's UUID
  bool healthy = true;
  int numa_node = 0;
};

struct ContainerAllocation {
  std::string env_key;
  std::string env_value;  // comma-joined device ids (BDFs, UUIDs) in request order
  std::vector<adapters::DeviceNodeSpec> device_specs;
};

class PluginCore {
 public:
  PluginCore(ServeConfig config, std::unique_ptr<engine::Engine> engine, NodeInventory inventory,
             std::optional<adapters::ModuleMapping> mapping, std::unique_ptr<FabricLink> fabric,
             Clock clock = SystemClock);

  // Journals the start, the inventory and the module mapping.
  Status Start(const std::string& version);

  // Brings Fabric Manager to a known state: connects if needed, hands it the journal's active
  // set if it waits for one after its own restart, resolves intents left without an outcome,
  // and repairs drift. Returns whether FM is usable. A no-op returning true without FM.
  bool SyncFabricManager();

  // One reconciliation pass with a successful PodResources List (SPEC §4.6): journal newly bound
  // pods, release allocations unused for the release grace, release orphaned partitions, repair
  // drift.
  void Reconcile(const std::vector<kubelet::ContainerDeviceAssignment>& containers);

  // Re-checks /dev/vfio/<group> and sysfs (driver, group, vendor) for every device.
  void CheckHealth();
  void ObserveKubeletRestart(const std::string& reason);

  // --- kubelet-facing -------------------------------------------------------------------------
  const NodeInventory& inventory() const { return inventory_; }
  bool fabric_managed() const { return fabric_ != nullptr; }
  std::vector<DeviceView> Devices(const std::string& resource) const;
  // Blocks until the device view changes from `seen` or `timeout` passes; returns the version.
  std::uint64_t WaitForChange(std::uint64_t seen, std::chrono::milliseconds timeout) const;
  std::uint64_t version() const;
  // Wakes ListAndWatch streams (e.g. on shutdown) without a change.
  void WakeWatchers();

  Result<std::vector<std::string>> Preferred(const std::string& resource,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             std::size_t size) const;
  Result<std::vector<ContainerAllocation>> Allocate(
      const std::string& resource, const std::vector<std::vector<std::string>>& containers);
  Status PreStart(const std::string& resource, const std::vector<std::string>& devices);

  engine::Engine& engine() { return *engine_; }
  FabricLink* fabric() { return fabric_.get(); }

  // Metrics (SPEC §8.1): set once before serving; null when --metrics-address is off.
  void SetMetrics(metrics::MetricsRegistry* metrics) { metrics_.store(metrics); }
  metrics::MetricsRegistry* metrics() const { return metrics_.load(); }
  bool fabric_manager_usable() const { return fm_usable_.load(); }
  std::string fabric_manager_problem() const { return FabricManagerProblem(); }

 private:
  struct SagaResult {
    sm::AllocationId allocation_id;
    std::string refusal;
    bool fm_in_use = false;                   // an activation was refused with FM_ST_IN_USE
    ErrorCode refusal_code = ErrorCode::kOk;  // the refusal's error code (sm::RefusalErrorCode)
  };
  // Executes a command and every effect it leads to, feeding outcomes back. Journal failures
  // are returned as errors; refusals come back in SagaResult.
  Result<SagaResult> RunSaga(const sm::Command& command);
  // Runs one sync (SyncFabricManagerOnce) and publishes whether FM is usable (fm_usable_).
  bool SyncFabricManagerLocked(bool pod_holders_known, const std::vector<sm::AllocationId>& held);
  bool SyncFabricManagerOnce(bool pod_holders_known, const std::vector<sm::AllocationId>& held);
  void RecordConnection(bool connected, const std::string& reason, const events::FmResult& fm);
  // Resolves intents left without an outcome and rejects requests that lost their caller.
  bool ResolveInterrupted(const std::set<sm::PartitionId>& fm_active);
  // Executes a command and logs (debug) what it journaled.
  Result<sm::Decision> ExecuteLogged(const sm::Command& command);
  // A sync problem that repeats on every retry: logged as an error once per change.
  void ReportSyncProblem(const std::string& text);
  void SetFabricManagerProblem(std::string problem);
  std::string FabricManagerProblem() const;
  void WarnAboutUnknownModules();
  // The device as the host has it now (driver, group, type, /dev node), by its kind.
  Status HostCheck(const ServedDevice& device);
  // Journals the device's health; true when it changed.
  bool RecheckHealth(const ServedDevice& device);
  // One container's device nodes: VFIO (and EGM for complete Grace GPU sets), or /dev/vfio for
  // mdevs.
  Result<std::vector<adapters::DeviceNodeSpec>> ContainerSpecs(const ResourceDevices& r,
                                                               const std::vector<std::string>& ids,
                                                               bool iommufd) const;
  void NotifyChanged();
  void LogIfError(const Status& status, const char* what);

  const ServeConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  const NodeInventory inventory_;
  const std::optional<adapters::ModuleMapping> mapping_;
  std::unique_ptr<FabricLink> fabric_;
  Clock clock_;

  std::mutex operation_mu_;
  // The last sync's verdict: FM connected *and* usable (not starting, not waiting for a resync,
  // partitions listed). Connected alone is not enough to advertise its devices as Healthy.
  std::atomic<bool> fm_usable_{false};
  mutable std::mutex fm_problem_mu_;
  std::string fm_problem_;  // why FM is not usable, when it is not
  sm::ReleaseTracker release_tracker_;
  // Set when a journal append failed between an intent and its outcome: what the request then
  // rejected is told instead of "the plugin stopped" (it did not).
  std::string interrupted_cause_;
  std::string last_sync_problem_;
  std::map<sm::Bdf, sm::ModuleId> warned_unknown_modules_;

  mutable std::mutex change_mu_;
  mutable std::condition_variable change_cv_;
  std::uint64_t version_ = 1;
  std::atomic<metrics::MetricsRegistry*> metrics_{nullptr};
};

}  // namespace gfp::plugin
