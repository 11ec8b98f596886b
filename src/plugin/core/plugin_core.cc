#include "plugin/core/plugin_core.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "adapters/host/device_recheck.h"
#include "adapters/host/egm_discovery.h"
#include "adapters/host/mdev_discovery.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/host/vfio_nodes.h"
#include "adapters/host/vgpu_vf_discovery.h"
#include "common/log_context.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "plugin/core/journal_failure.h"
#include "plugin/core/log_scope.h"
#include "plugin/core/log_text.h"
#include "plugin/metrics/metrics_registry.h"
#include "statemachine/event_codec.h"
#include "statemachine/fm_codes.h"
#include "statemachine/preferred.h"
#include "statemachine/recovery.h"

namespace gfp::plugin {
namespace {

// How much of a kubelet-supplied ID list a log line or message carries.
constexpr std::size_t kMaxIdsText = 256;

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

std::string FmOutcomeText(const events::FmResult& fm) {
  std::string text = fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name();
  if (!fm.message().empty()) text += " (" + LogText(fm.message(), 256) + ")";
  return text;
}

// Metrics: one FM call that changes partitions.
void RecordPartitionOperation(metrics::MetricsRegistry* m, sm::Effect::Kind kind,
                              const events::FmResult& fm) {
  if (!m) return;
  using Op = metrics::PartitionOperation;
  const Op op = kind == sm::Effect::Kind::kActivatePartition     ? Op::kActivate
                : kind == sm::Effect::Kind::kDeactivatePartition ? Op::kDeactivate
                                                                 : Op::kResync;
  m->RecordPartitionOperation(op, sm::FmCallSucceeded(fm),
                              fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name());
}

// Metrics: drift found against FM.
void RecordDrift(metrics::MetricsRegistry* m, const events::DriftDetected& drift) {
  if (!m) return;
  if (drift.kind() == events::DriftDetected::KIND_ACTIVE_IN_FM_ONLY) {
    m->RecordDrift(metrics::DriftKind::kActivatedElsewhere);
  } else if (drift.kind() == events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY) {
    m->RecordDrift(metrics::DriftKind::kLost);
  }
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

sm::Micros SystemClock() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PluginCore::PluginCore(ServeConfig config, std::unique_ptr<engine::Engine> engine,
                       NodeInventory inventory, std::optional<adapters::ModuleMapping> mapping,
                       std::unique_ptr<FabricLink> fabric, Clock clock)
    : config_(std::move(config)),
      engine_(std::move(engine)),
      inventory_(std::move(inventory)),
      mapping_(std::move(mapping)),
      fabric_(std::move(fabric)),
      clock_(std::move(clock)) {}

void PluginCore::LogIfError(const Status& status, const char* what) {
  if (!status.ok()) spdlog::error("{}: {}", what, status.message());
}

Status PluginCore::Start(const std::string& version) {
  std::lock_guard lock(operation_mu_);
  sm::StartPlugin start;
  start.now = clock_();
  start.version = version;
  start.fabric_manager_enabled = fabric_ != nullptr;
  start.node_name = config_.node_name;
  start.release_grace =
      std::chrono::duration_cast<std::chrono::microseconds>(config_.release_grace).count();
  GFP_RETURN_IF_ERROR(engine_->Execute(start).status());
  for (const auto& warning : inventory_.warnings) spdlog::warn("{}", warning);
  GFP_RETURN_IF_ERROR(engine_->Execute(InventoryCommand(inventory_, clock_())).status());
  if (mapping_) {
    sm::ObserveModuleMapping command;
    command.now = clock_();
    command.path = mapping_->source;
    for (const auto& [bdf, module] : mapping_->module_by_bdf) {
      events::ModuleAssignment a;
      a.set_bdf(bdf);
      a.set_module_id(module);
      command.assignments.push_back(a);
    }
    GFP_ASSIGN_OR_RETURN(sm::Decision d, engine_->Execute(command));
    if (!d.refusal.empty()) return FailedPrecondition(d.refusal);
  }
  NotifyChanged();
  return Status::Ok();
}

Result<sm::Decision> PluginCore::ExecuteLogged(const sm::Command& command) {
  auto decision = engine_->Execute(command);
  if (!decision.ok()) return decision;
  for (const auto& event : decision->events) {
    ScopedLogContext event_scope;
    if (event.has_drift_detected() || spdlog::should_log(spdlog::level::debug)) {
      AddEvent(event_scope, decision->state_after, event);
    }
    if (event.has_drift_detected()) {
      RecordDrift(metrics(), event.drift_detected());
      spdlog::warn("drift found: {}", LogText(event.drift_detected().detail(), 512));
    } else if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("journaled {}: {}", sm::EventTypeName(event),
                    LogText(sm::SummarizeEvent(event), 512));
    }
  }
  return decision;
}

Result<PluginCore::SagaResult> PluginCore::RunSaga(const sm::Command& command) {
  GFP_ASSIGN_OR_RETURN(sm::Decision decision, ExecuteLogged(command));
  SagaResult result{decision.allocation_id, decision.refusal, false,
                    sm::RefusalErrorCode(decision)};
  ScopedLogContext saga_scope;
  AddAllocation(saga_scope, decision.state_after, decision.allocation_id);
  std::vector<sm::Effect> effects = decision.effects;
  for (std::size_t i = 0; i < effects.size(); ++i) {
    const sm::Effect effect = effects[i];
    ScopedLogContext effect_scope;
    if (effect.kind != sm::Effect::Kind::kSetActivatedPartitions) {
      AddPartition(effect_scope, *engine_, effect.partition_id);
    }
    events::FmResult outcome;
    if (fabric_) {
      const auto started = std::chrono::steady_clock::now();
      outcome = fabric_->Carry(effect);
      effect_scope.FmCode(outcome.name());
      RecordPartitionOperation(metrics(), effect.kind, outcome);
      spdlog::debug("Fabric Manager {} {}: {} in {:.1f} ms", EffectName(effect.kind),
                    EffectTarget(effect), FmOutcomeText(outcome), MillisSince(started));
      result.fm_in_use |= effect.kind == sm::Effect::Kind::kActivatePartition &&
                          outcome.code() == sm::fm_code::kInUse;
    } else {
      outcome.set_code(sm::fm_code::kNotSupported);
      outcome.set_name(sm::fm_code::Name(sm::fm_code::kNotSupported));
      outcome.set_message("Fabric Manager management is disabled");
      effect_scope.FmCode(outcome.name());
    }
    const sm::Command next = sm::OutcomeOf(effect, clock_(), outcome);
    // If this append fails the intent stays without an outcome: the next sync resolves it by
    // asking FM, and tells the request it rejects what happened.
    auto executed = ExecuteLogged(next);
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

void PluginCore::RecordConnection(bool connected, const std::string& reason,
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
  auto d = engine_->Execute(c);
  if (!d.ok()) {
    LogIfError(d.status(), "journaling the Fabric Manager connection state");
  } else if (!d->events.empty()) {
    if (connected) {
      spdlog::info("connected to Fabric Manager at {}", fabric_->address());
    } else {
      spdlog::warn("Fabric Manager at {} unreachable: {}; its devices are Unhealthy",
                   fabric_->address(), LogText(fm.message().empty() ? reason : fm.message(), 512));
    }
    NotifyChanged();
  }
}

bool PluginCore::SyncFabricManager() {
  std::lock_guard lock(operation_mu_);
  return SyncFabricManagerLocked(false, {});
}

bool PluginCore::SyncFabricManagerLocked(bool pod_holders_known,
                                         const std::vector<sm::AllocationId>& held) {
  if (!fabric_) return true;
  const bool usable = SyncFabricManagerOnce(pod_holders_known, held);
  if (fm_usable_.exchange(usable) != usable) NotifyChanged();
  return usable;
}

bool PluginCore::SyncFabricManagerOnce(bool pod_holders_known,
                                       const std::vector<sm::AllocationId>& held) {
  if (!fabric_->connected()) {
    events::FmResult connect = fabric_->Connect();
    if (connect.code() != 0) {
      SetFabricManagerProblem("cannot connect to " + fabric_->address() + ": " +
                              FmOutcomeText(connect));
      RecordConnection(false, "connect failed", connect);
      return false;
    }
  }
  events::FmResult failure;
  auto partitions = fabric_->FabricState(&failure);
  if (!partitions.ok() && failure.code() == sm::fm_code::kNotConfigured) {
    // FM is starting, or restarted in resiliency mode and waits for the active set.
    RecordConnection(true, "", {});
    auto resync = RunSaga(sm::ResyncFabricManager{clock_()});
    if (!resync.ok() || !resync->refusal.empty()) {
      const std::string why = resync.ok() ? resync->refusal : resync.status().message();
      SetFabricManagerProblem("it is not ready yet: " + why);
      spdlog::info("Fabric Manager not ready yet: {}", why);
      return false;
    }
    spdlog::info("Fabric Manager resynced with the journal's active partitions");
    partitions = fabric_->FabricState(&failure);
  }
  if (!partitions.ok()) {
    SetFabricManagerProblem("listing its partitions failed: " + FmOutcomeText(failure));
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
  auto repaired = RunSaga(observed);
  if (!repaired.ok()) {
    ReportSyncProblem("journaling Fabric Manager's state: " + repaired.status().message());
    return false;
  }
  if (!repaired->refusal.empty()) spdlog::warn("{}", repaired->refusal);
  last_sync_problem_.clear();
  WarnAboutUnknownModules();
  if (!fabric_->connected()) return false;
  SetFabricManagerProblem("");
  return true;
}

bool PluginCore::ResolveInterrupted(const std::set<sm::PartitionId>& fm_active) {
  // Intents left without an outcome: a crash, or a failed journal append, between the FM call
  // and its journaling.
  for (const auto& outcome :
       sm::ResolvePendingIntents(engine_->CopyState(), fm_active, clock_(), interrupted_cause_)) {
    ScopedLogContext intent_scope;
    AddPartition(intent_scope, *engine_, outcome.partition_id);
    intent_scope.FmCode(outcome.fm.name());
    auto resolved = RunSaga(outcome);
    if (!resolved.ok()) {
      ReportSyncProblem("cannot journal the resolution of the pending " +
                        std::string(sm::IntentKindName(outcome.kind)) + " of partition " +
                        std::to_string(outcome.partition_id) +
                        " (retrying): " + resolved.status().message());
      return false;
    }
    spdlog::warn("{}", outcome.fm.message());
  }
  auto abandoned = ExecuteLogged(sm::AbandonInterruptedRequests{clock_(), interrupted_cause_});
  if (!abandoned.ok()) {
    ReportSyncProblem("cannot journal the rejection of interrupted requests (retrying): " +
                      abandoned.status().message());
    return false;
  }
  interrupted_cause_.clear();
  return true;
}

void PluginCore::ReportSyncProblem(const std::string& text) {
  SetFabricManagerProblem(text);
  if (text == last_sync_problem_) {
    spdlog::debug("{}", text);
    return;
  }
  spdlog::error("{}", text);
  last_sync_problem_ = text;
}

void PluginCore::SetFabricManagerProblem(std::string problem) {
  std::lock_guard lock(fm_problem_mu_);
  fm_problem_ = std::move(problem);
}

std::string PluginCore::FabricManagerProblem() const {
  std::lock_guard lock(fm_problem_mu_);
  return fm_problem_.empty() ? "it is not connected yet" : fm_problem_;
}

void PluginCore::WarnAboutUnknownModules() {
  auto unknown = engine_->Read(
      [](const sm::State& s) { return sm::GpusWithModulesUnknownToFabricManager(s); });
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
  NotifyChanged();
}

void PluginCore::Reconcile(const std::vector<kubelet::ContainerDeviceAssignment>& containers) {
  std::lock_guard lock(operation_mu_);
  sm::ObservePodResources observed;
  observed.now = clock_();
  for (const auto& c : containers) {
    observed.containers.push_back(
        {c.pod_namespace, c.pod_name, c.container_name, c.resource_name, c.device_ids});
  }
  auto bound = ExecuteLogged(observed);
  if (!bound.ok()) {
    LogIfError(bound.status(), "journaling pods seen");
    return;
  }
  const sm::ReleaseTracker::Due due =
      release_tracker_.Observe(engine_->CopyState(), observed.containers, observed.now);
  for (const auto& id : due.newly_absent) {
    ScopedLogContext allocation_scope;
    AddAllocation(allocation_scope, *engine_, id);
    spdlog::debug(
        "{}: its devices are in no pod; release scheduled in {} ms unless a pod shows "
        "them again",
        id, config_.release_grace.count());
  }
  for (const auto& id : due.allocations) {
    ScopedLogContext allocation_scope;
    AddAllocation(allocation_scope, *engine_, id);
    spdlog::info("releasing {}: its devices were in no pod for {} ms", id,
                 config_.release_grace.count());
    sm::ReleaseAllocation release;
    release.now = clock_();
    release.allocation_id = id;
    release.detail = "devices absent from every pod for the release grace";
    auto done = RunSaga(release);
    if (!done.ok()) LogIfError(done.status(), "releasing an allocation");
  }
  for (const auto pid : due.orphan_partitions) {
    ScopedLogContext partition_scope;
    AddPartition(partition_scope, *engine_, pid);
    spdlog::info("releasing ownerless partition {}: no pod holds its GPUs", pid);
    auto done = RunSaga(sm::ReleaseOrphanPartition{clock_(), pid, "no pod holds its GPUs"});
    if (!done.ok()) LogIfError(done.status(), "releasing an ownerless partition");
  }
  SyncFabricManagerLocked(true, release_tracker_.held());
}

Status PluginCore::HostCheck(const ServedDevice& served) {
  switch (served.kind) {
    case sm::DeviceKind::kMdev:
      return adapters::CheckMdevUnchanged(config_.sysfs_root, *served.mdev);
    case sm::DeviceKind::kVgpuVf:
      GFP_RETURN_IF_ERROR(adapters::CheckVfUnchanged(config_.sysfs_root, *served.vf));
      return adapters::CheckVfioGroupNode(config_.dev_root, served.pci->iommu_group);
    case sm::DeviceKind::kPciPassthrough:
      break;
  }
  const adapters::PciDevice* device = &*served.pci;
  const std::string& bdf = device->bdf;
  GFP_RETURN_IF_ERROR(adapters::CheckDeviceUnchanged(config_.sysfs_root, *device));
  auto identity = adapters::ReadDeviceIdentity(config_.sysfs_root, bdf);
  if (!identity.ok()) return identity.status();
  if (!identity->driver || !adapters::IsVfioDriver(*identity->driver)) {
    return FailedPrecondition(bdf + ": bound to " + identity->driver.value_or("no driver") +
                              ", not to a VFIO driver");
  }
  return adapters::CheckVfioGroupNode(config_.dev_root, device->iommu_group);
}

void PluginCore::CheckHealth() {
  std::lock_guard lock(operation_mu_);
  bool changed = false;
  for (const auto& resource : inventory_.resources) {
    for (const auto& device : resource.devices) changed |= RecheckHealth(device);
  }
  if (changed) NotifyChanged();
}

bool PluginCore::RecheckHealth(const ServedDevice& device) {
  Status status = HostCheck(device);
  sm::ObserveDeviceHealth health{clock_(), device.id, status.ok(), status.message()};
  auto d = engine_->Execute(health);
  if (!d.ok()) {
    LogIfError(d.status(), "journaling a health change");
    return false;
  }
  if (d->events.empty()) return false;
  if (status.ok()) {
    spdlog::info("device {} is Healthy again", device.id);
  } else {
    spdlog::warn("device {} is Unhealthy: {}", device.id, LogText(status.message(), 512));
  }
  return true;
}

void PluginCore::ObserveKubeletRestart(const std::string& reason) {
  std::lock_guard lock(operation_mu_);
  LogIfError(engine_->Execute(sm::ObserveKubeletRestart{clock_(), reason}).status(),
             "journaling a kubelet restart");
}

std::vector<DeviceView> PluginCore::Devices(const std::string& resource) const {
  std::vector<DeviceView> out;
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return out;
  engine_->Read([&](const sm::State& s) {
    const bool fabric_ok = !fabric_ || (s.fm_connected && fm_usable_.load());
    // A GPU mapped to a module FM's table lacks can never be allocated.
    const auto unknown_module =
        fabric_ ? sm::GpusWithModulesUnknownToFabricManager(s) : std::map<sm::Bdf, sm::ModuleId>{};
    for (const auto& d : r->devices) {
      auto it = s.devices.find(d.id);
      DeviceView view;
      view.id = d.id;
      view.numa_node = static_cast<int>(std::max<std::int64_t>(0, d.numa_node));
      // Fabric Manager has no say over mdevs; whole GPUs and VFs need it and their GPU's module.
      const bool fabric_device = fabric_ && d.kind != sm::DeviceKind::kMdev;
      view.healthy = it != s.devices.end() && it->second.healthy &&
                     (!fabric_device || (fabric_ok && s.module_of_bdf.count(d.gpu_bdf()) > 0 &&
                                         unknown_module.count(d.gpu_bdf()) == 0));
      out.push_back(view);
    }
    return 0;
  });
  return out;
}

void PluginCore::NotifyChanged() {
  {
    std::lock_guard lock(change_mu_);
    ++version_;
  }
  change_cv_.notify_all();
}

void PluginCore::WakeWatchers() { change_cv_.notify_all(); }

std::uint64_t PluginCore::version() const {
  std::lock_guard lock(change_mu_);
  return version_;
}

std::uint64_t PluginCore::WaitForChange(std::uint64_t seen,
                                        std::chrono::milliseconds timeout) const {
  std::unique_lock lock(change_mu_);
  change_cv_.wait_for(lock, timeout, [&] { return version_ != seen; });
  return version_;
}

Result<std::vector<std::string>> PluginCore::Preferred(const std::string& resource,
                                                       const std::vector<std::string>& available,
                                                       const std::vector<std::string>& must_include,
                                                       std::size_t size) const {
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return NotFound("unknown resource " + resource);
  if (fabric_ && r->kind != sm::DeviceKind::kMdev && !fm_usable_.load()) {
    return Unavailable("Fabric Manager is not usable (" + FabricManagerProblem() +
                       "); cannot choose GPUs that form one partition");
  }
  return engine_->Read([&](const sm::State& s) {
    return sm::PreferredAllocation(s, sm::PreferredRequest{available, must_include, size});
  });
}

Result<std::vector<ContainerAllocation>> PluginCore::Allocate(
    const std::string& resource, const std::vector<std::vector<std::string>>& containers) {
  std::lock_guard lock(operation_mu_);
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return NotFound("unknown resource " + resource);
  if (containers.empty()) return InvalidArgument("Allocate without container requests");
  GFP_ASSIGN_OR_RETURN(const bool iommufd, adapters::DetectIommufd(config_.dev_root));

  // 1. The host as it is now: a device re-bound, moved or without its /dev node is unhealthy
  //    (journaled), and the state machine then refuses it with that reason.
  bool health_changed = false;
  for (const auto& ids : containers) {
    for (const auto& id : ids) {
      const ServedDevice* device = inventory_.FindDevice(id);
      if (!device) continue;  // the state machine names unknown ids
      Status status = HostCheck(*device);
      auto d =
          engine_->Execute(sm::ObserveDeviceHealth{clock_(), id, status.ok(), status.message()});
      if (!d.ok()) return JournalFailure(d.status());
      health_changed |= !d->events.empty();
    }
  }
  if (health_changed) NotifyChanged();

  // 2. Validate every container before anything is activated: a dry run of the decision.
  std::vector<sm::RequestAllocation> requests;
  for (std::size_t i = 0; i < containers.size(); ++i) {
    sm::RequestAllocation request;
    request.now = clock_();
    request.resource = resource;
    request.device_ids = containers[i];
    request.container_index = static_cast<std::uint32_t>(i);
    const sm::Decision dry =
        engine_->Read([&](const sm::State& s) { return sm::Decide(s, request); });
    if (!dry.refusal.empty()) {
      // Journal the rejection for the audit trail, then refuse.
      auto journaled = ExecuteLogged(request);
      if (!journaled.ok()) return JournalFailure(journaled.status());
      return Status(sm::RefusalErrorCode(dry),
                    "container " + std::to_string(i) + ": " + dry.refusal);
    }
    requests.push_back(std::move(request));
  }

  // 3. Device nodes per container.
  std::vector<ContainerAllocation> out;
  for (const auto& ids : containers) {
    GFP_ASSIGN_OR_RETURN(auto specs, ContainerSpecs(*r, ids, iommufd));
    out.push_back({r->naming.env_key, Join(ids), std::move(specs)});
  }

  // 4. Journal first, then Fabric Manager, then the answer.
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ScopedLogContext request_scope;
    requests[i].now = clock_();
    auto first = RunSaga(requests[i]);
    if (!first.ok()) return JournalFailure(first.status());
    SagaResult saga = std::move(first).value();
    AddAllocation(request_scope, *engine_, saga.allocation_id);
    if (!saga.refusal.empty() && saga.fm_in_use) {
      // FM has an active partition the journal does not know yet (changed behind our back
      // since the last reconcile). Learn FM's state — the stranger is adopted — and try once
      // more: the adopted partition is then cleared like any stale one.
      spdlog::warn("{}; refreshing Fabric Manager's state and retrying once", saga.refusal);
      SyncFabricManagerLocked(false, {});
      requests[i].now = clock_();
      auto again = RunSaga(requests[i]);
      if (!again.ok()) return JournalFailure(again.status());
      saga = std::move(again).value();
      AddAllocation(request_scope, *engine_, saga.allocation_id);
    }
    if (!saga.refusal.empty()) {
      return Status(saga.refusal_code, "container " + std::to_string(i) + ": " + saga.refusal);
    }
    spdlog::info("allocated {} [{}] as {}", resource, Join(containers[i]), saga.allocation_id);
  }
  return out;
}

Result<std::vector<adapters::DeviceNodeSpec>> PluginCore::ContainerSpecs(
    const ResourceDevices& r, const std::vector<std::string>& ids, bool iommufd) const {
  if (r.kind == sm::DeviceKind::kMdev) return adapters::MdevContainerDeviceSpecs();
  GFP_ASSIGN_OR_RETURN(auto specs,
                       adapters::ContainerDeviceSpecs(inventory_.pci_functions, ids, iommufd));
  if (r.kind != sm::DeviceKind::kPciPassthrough) return specs;
  // Grace EGM: looked up at every Allocate, as the Go plugin does (upstream-behaviour.md §1.9),
  // so an EGM node created after start is handed out too.
  auto egms = adapters::DiscoverEgmDevices(config_.sysfs_root, config_.dev_root);
  if (!egms.ok()) {
    spdlog::warn("EGM discovery: {}", egms.status().message());
    return specs;
  }
  for (const auto& path : adapters::EgmDeviceNodesFor(egms->devices, ids)) {
    specs.push_back({path, path, "mrw"});
  }
  return specs;
}

Status PluginCore::PreStart(const std::string& resource, const std::vector<std::string>& devices) {
  if (!fabric_) return Status::Ok();
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return NotFound("unknown resource " + resource);
  if (r->kind == sm::DeviceKind::kMdev) return Status::Ok();  // no partition to verify
  std::lock_guard lock(operation_mu_);
  // Verify in FM first: a partition FM lost shows up as drift and is repaired here.
  if (!SyncFabricManagerLocked(false, {})) {
    return Unavailable("Fabric Manager is not usable (" + FabricManagerProblem() +
                       "); cannot verify the partition of " +
                       EscapeAndTruncate(Join(devices), kMaxIdsText));
  }
  ScopedLogContext prestart_scope;
  AddAllocationOfDevices(prestart_scope, *engine_, devices);
  auto saga = RunSaga(sm::EnsurePartitionActive{clock_(), devices});
  if (!saga.ok()) return JournalFailure(saga.status());
  if (!saga->refusal.empty()) return Status(saga->refusal_code, saga->refusal);
  return Status::Ok();
}

}  // namespace gfp::plugin
