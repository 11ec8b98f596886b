// The plugin's behaviour, independent of gRPC: what kubelet's calls do, how Fabric Manager is
// kept in step, health, and reconciliation. Every change goes through the engine (decide ->
// journal -> apply); effects are carried out only after their intent is durable.
//
// PluginCore wires the parts, each with one job: SagaRunner (a command and its FM effects),
// FabricSync (FM connection, resync, interrupted intents, drift), DeviceHealth (host
// re-checks), Reconciler (pods seen, releases) and ChangeCounter (what ListAndWatch waits on).
// It answers kubelet's calls itself.
//
// Thread safety: all public methods may be called from any thread. Operations that change the
// journal (Allocate, PreStart, reconciliation, FM sync, health) are serialised by one mutex so
// that a multi-step decision chain is never interleaved; reads (device lists, preferred
// allocation) only take the engine's short state lock.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "adapters/host/allocation_device_specs.h"
#include "adapters/kubelet/pod_device_assignment.h"
#include "adapters/mapping/module_mapping.h"
#include "common/status.h"
#include "engine/engine.h"
#include "plugin/core/change_counter.h"
#include "plugin/core/core_observer.h"
#include "plugin/core/device_health.h"
#include "plugin/core/fabric_port.h"
#include "plugin/core/fabric_sync.h"
#include "plugin/core/listed_holders.h"
#include "plugin/core/node_inventory.h"
#include "plugin/core/plugin_clock.h"
#include "plugin/core/reconciler.h"
#include "plugin/core/saga_runner.h"
#include "plugin/serve_config.h"

namespace gfp::plugin::core {

struct DeviceView {
  std::string id;  // BDF, or an mdev's UUID
  bool healthy = true;
  int numa_node = 0;
};

struct ContainerAllocation {
  std::string env_key;
  std::string env_value;  // comma-joined device ids (BDFs, UUIDs) in request order
  std::vector<adapters::host::DeviceNodeSpec> device_specs;
};

class PluginCore {
 public:
  PluginCore(ServeConfig config, std::unique_ptr<engine::Engine> engine, NodeInventory inventory,
             std::optional<adapters::mapping::ModuleMapping> mapping,
             std::unique_ptr<FabricPort> fabric, Clock clock = SystemClock);

  // Journals the start, the inventory and the module mapping.
  Status Start(const std::string& version);

  // Brings Fabric Manager to a known state: connects if needed, hands it the journal's active
  // set if it waits for one after its own restart, resolves intents left without an outcome,
  // and repairs drift. Returns whether FM is usable. A no-op returning true without FM.
  bool SyncFabricManager();

  // One reconciliation pass with a successful PodResources List (SPEC §4.6): journal newly bound
  // pods, release allocations unused for the release grace, release orphaned partitions, repair
  // drift.
  void Reconcile(const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers);

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

  // kubelet's Allocate for one pod: `containers` holds each container's device ids.
  //  1. Re-checks every requested device on the host; a change is journaled first, so a device
  //     re-bound or without its /dev node is refused with that reason.
  //  2. Validates every container by a dry run of its decision before anything changes: if one
  //     would be refused, that refusal is journaled (the audit trail) and the call fails with it;
  //     no partition was touched. (A single container of known devices skips the dry run: its
  //     own saga refuses the same way before any FM call.)
  //  3. Runs each container's saga in order: intent durable -> FM call -> outcome durable. An
  //     activation refused with FM_ST_IN_USE means FM has an active partition the journal does
  //     not know yet: FM is synced (the stranger is adopted as drift) and that container is
  //     tried once more, which deactivates the stranger like any stale overlapping partition.
  //  4. Answers only when every container is granted and journaled. A granted container whose
  //     devices a pod held in kubelet's last PodResources listing is logged at warn, naming
  //     the pod, and counted (listed_holders.h says why it is not refused).
  // A failure in container k (refusal, or the journal not writable: RESOURCE_EXHAUSTED when
  // full, else INTERNAL) fails the whole call, but containers 0..k-1 stay granted with their
  // partitions active: kubelet retries the Allocate, and the retry's allocations of the same
  // devices supersede them; if no pod ever holds them, the release grace frees them.
  Result<std::vector<ContainerAllocation>> Allocate(
      const std::string& resource, const std::vector<std::vector<std::string>>& containers);

  // kubelet's PreStartContainer. Without Fabric Manager, or for mdevs, there is nothing to
  // verify: OK. Otherwise syncs FM first (a partition FM lost shows up as drift and is repaired),
  // then makes sure the partition of the newest granted allocation holding exactly `devices` is
  // active, re-activating it (journaled first) when needed. Fails UNAVAILABLE when FM is not
  // usable, FAILED_PRECONDITION when no granted allocation holds exactly these devices or the
  // partition cannot be re-activated (its GPUs are in another active partition, an intent is
  // pending), or with FM's refusal.
  Status PreStart(const std::string& resource, const std::vector<std::string>& devices);

  engine::Engine& engine() { return *engine_; }
  FabricPort* fabric() { return fabric_.get(); }
  const ServeConfig& config() const { return config_; }
  sm::Micros Now() const { return clock_(); }
  // Wakes whoever waits on the device view (the DRA slice publisher) after a change.
  void NoteChange() { changes_.Bump(); }

  // DRA mode's claim flows (plugin/dra_mode): runs `work(sagas, fabric_sync)` under the lock that
  // serialises every journal-changing operation, so a claim's saga, its files and their record
  // never interleave with reconciliation, health or FM sync.
  template <typename Work>
  auto Exclusive(Work&& work) {
    std::lock_guard lock(operation_mu_);
    return work(sagas_, fabric_sync_);
  }

  // Who watches the core (the SPEC §8.1 metrics): set once before serving; null when
  // --metrics-address is off.
  void SetObserver(CoreObserver* observer) { observer_.store(observer); }
  CoreObserver* observer() const { return observer_.load(); }
  bool fabric_manager_usable() const { return fabric_sync_.usable(); }
  std::string fabric_manager_problem() const { return fabric_sync_.problem(); }

 private:
  // Step 1 of Allocate: re-checks the host for every requested device the node serves.
  Status RecheckRequested(const std::vector<std::vector<std::string>>& containers);
  // Step 2 of Allocate: the requests, or the first container's refusal (journaled).
  Result<std::vector<sm::RequestAllocation>> ValidateContainers(
      const ResourceDevices& resource, const std::vector<std::vector<std::string>>& containers);
  // Step 3 of Allocate for one container, with the one retry after FM_ST_IN_USE.
  Status GrantContainer(sm::RequestAllocation& request);
  // After a grant: warns about and counts devices a listed pod held (listed_holders.h).
  void NoteDevicesTakenFromListedPods(const sm::RequestAllocation& request,
                                      const std::vector<ListedHolder>& holders);

  const ServeConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  const NodeInventory inventory_;
  const std::optional<adapters::mapping::ModuleMapping> mapping_;
  std::unique_ptr<FabricPort> fabric_;
  const Clock clock_;
  std::atomic<CoreObserver*> observer_{nullptr};

  ChangeCounter changes_;
  SagaRunner sagas_;
  FabricSync fabric_sync_;
  DeviceHealth health_;
  Reconciler reconciler_;
  ListedHolders listed_holders_;  // guarded by operation_mu_
  std::mutex operation_mu_;
};

}  // namespace gfp::plugin::core
