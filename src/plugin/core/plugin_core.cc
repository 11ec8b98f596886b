#include "plugin/core/plugin_core.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "adapters/host/vfio_nodes.h"
#include "common/log_context.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "plugin/core/container_specs.h"
#include "plugin/core/journal_failure.h"
#include "plugin/core/log_scope.h"
#include "statemachine/preferred.h"

namespace gfp::plugin::core {
namespace {

// How much of a kubelet-supplied ID list a log line or message carries.
constexpr std::size_t kMaxIdsText = 256;

std::string ContainerText(std::size_t index) { return "container " + std::to_string(index); }

// Whether every id is a device of `resource` (its devices are sorted by id).
bool AllServedBy(const ResourceDevices& resource, const std::vector<std::string>& ids) {
  return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
    auto it = std::lower_bound(
        resource.devices.begin(), resource.devices.end(), id,
        [](const ServedDevice& device, const std::string& wanted) { return device.id < wanted; });
    return it != resource.devices.end() && it->id == id;
  });
}

}  // namespace

sm::Micros SystemClock() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PluginCore::PluginCore(ServeConfig config, std::unique_ptr<engine::Engine> engine,
                       NodeInventory inventory,
                       std::optional<adapters::mapping::ModuleMapping> mapping,
                       std::unique_ptr<FabricPort> fabric, Clock clock)
    : config_(std::move(config)),
      engine_(std::move(engine)),
      inventory_(std::move(inventory)),
      mapping_(std::move(mapping)),
      fabric_(std::move(fabric)),
      clock_(std::move(clock)),
      sagas_(*engine_, fabric_.get(), clock_, observer_),
      fabric_sync_(*engine_, fabric_.get(), sagas_, changes_, clock_, mapping_),
      health_(config_, inventory_, *engine_, changes_, clock_),
      reconciler_(config_, *engine_, sagas_, fabric_sync_, clock_) {}

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
  changes_.Bump();
  return Status::Ok();
}

bool PluginCore::SyncFabricManager() {
  std::lock_guard lock(operation_mu_);
  return fabric_sync_.Sync(false, {});
}

void PluginCore::Reconcile(
    const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers) {
  std::lock_guard lock(operation_mu_);
  listed_holders_.Remember(containers, clock_());
  reconciler_.Reconcile(containers);
}

void PluginCore::CheckHealth() {
  std::lock_guard lock(operation_mu_);
  health_.RecheckAll();
}

void PluginCore::ObserveKubeletRestart(const std::string& reason) {
  std::lock_guard lock(operation_mu_);
  auto d = engine_->Execute(sm::ObserveKubeletRestart{clock_(), reason});
  if (!d.ok()) spdlog::error("journaling a kubelet restart: {}", d.status().message());
}

std::vector<DeviceView> PluginCore::Devices(const std::string& resource) const {
  std::vector<DeviceView> out;
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return out;
  const bool fm_usable = fabric_sync_.usable();
  engine_->Read([&](const sm::State& s) {
    const bool fabric_ok = !fabric_ || (s.fm_connected && fm_usable);
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

std::uint64_t PluginCore::WaitForChange(std::uint64_t seen,
                                        std::chrono::milliseconds timeout) const {
  return changes_.WaitForChange(seen, timeout);
}

std::uint64_t PluginCore::version() const { return changes_.version(); }

void PluginCore::WakeWatchers() { changes_.WakeAll(); }

Result<std::vector<std::string>> PluginCore::Preferred(const std::string& resource,
                                                       const std::vector<std::string>& available,
                                                       const std::vector<std::string>& must_include,
                                                       std::size_t size) const {
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return NotFound("unknown resource " + resource);
  if (fabric_ && r->kind != sm::DeviceKind::kMdev && !fabric_sync_.usable()) {
    return Unavailable("Fabric Manager is not usable (" + fabric_sync_.problem() +
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
  GFP_ASSIGN_OR_RETURN(const bool iommufd, adapters::host::DetectIommufd(config_.dev_root));
  GFP_RETURN_IF_ERROR(RecheckRequested(containers));
  GFP_ASSIGN_OR_RETURN(std::vector<sm::RequestAllocation> requests,
                       ValidateContainers(*r, containers));
  std::vector<ContainerAllocation> out;
  for (const auto& ids : containers) {
    GFP_ASSIGN_OR_RETURN(auto specs, ContainerDeviceNodes(config_, inventory_, *r, ids, iommufd));
    out.push_back({r->naming.env_key, Join(ids), std::move(specs)});
  }
  for (auto& request : requests) {
    const auto holders = listed_holders_.HoldersOf(r->naming.resource_name, request.device_ids);
    GFP_RETURN_IF_ERROR(GrantContainer(request));
    if (!holders.empty()) NoteDevicesTakenFromListedPods(request, holders);
  }
  return out;
}

Status PluginCore::RecheckRequested(const std::vector<std::vector<std::string>>& containers) {
  for (const auto& ids : containers) {
    for (const auto& id : ids) {
      const ServedDevice* device = inventory_.FindDevice(id);
      if (!device) continue;  // the state machine names unknown ids
      auto changed = health_.Recheck(*device);
      if (!changed.ok()) return JournalFailure(changed.status());
    }
  }
  return Status::Ok();
}

Result<std::vector<sm::RequestAllocation>> PluginCore::ValidateContainers(
    const ResourceDevices& r, const std::vector<std::vector<std::string>>& containers) {
  std::vector<sm::RequestAllocation> requests;
  for (std::size_t i = 0; i < containers.size(); ++i) {
    sm::RequestAllocation request;
    request.now = clock_();
    request.resource = r.naming.resource_name;
    request.device_ids = containers[i];
    request.container_index = static_cast<std::uint32_t>(i);
    requests.push_back(std::move(request));
  }
  // One container of this resource's devices needs no dry run: its saga refuses (and journals)
  // exactly what the dry run would, before any FM call. An unknown id still goes through the
  // dry run, so that the state machine names it before the device nodes are looked up; so does
  // an mdev, whose device nodes are read from sysfs: a gone mdev is refused as gone (journaled),
  // not for the iommu_group it no longer has.
  if (containers.size() == 1 && r.kind != sm::DeviceKind::kMdev &&
      AllServedBy(r, containers.front())) {
    return requests;
  }
  for (const auto& request : requests) {
    const sm::Decision dry =
        engine_->Read([&](const sm::State& s) { return sm::Decide(s, request); });
    if (!dry.refusal.empty()) {
      // Journal the rejection for the audit trail, then refuse.
      auto journaled = sagas_.ExecuteLogged(request);
      if (!journaled.ok()) return JournalFailure(journaled.status());
      return Status(sm::RefusalErrorCode(dry),
                    ContainerText(request.container_index) + ": " + dry.refusal);
    }
  }
  return requests;
}

Status PluginCore::GrantContainer(sm::RequestAllocation& request) {
  ScopedLogContext request_scope;
  request.now = clock_();
  auto first = sagas_.Run(request);
  if (!first.ok()) return JournalFailure(first.status());
  SagaResult saga = std::move(first).value();
  AddAllocation(request_scope, *engine_, saga.allocation_id);
  if (!saga.refusal.empty() && saga.fm_in_use) {
    // FM has an active partition the journal does not know yet (changed behind our back
    // since the last reconcile). Learn FM's state — the stranger is adopted — and try once
    // more: the adopted partition is then cleared like any stale one.
    spdlog::warn("{}; refreshing Fabric Manager's state and retrying once", saga.refusal);
    fabric_sync_.Sync(false, {});
    request.now = clock_();
    auto again = sagas_.Run(request);
    if (!again.ok()) return JournalFailure(again.status());
    saga = std::move(again).value();
    AddAllocation(request_scope, *engine_, saga.allocation_id);
  }
  if (!saga.refusal.empty()) {
    return Status(saga.refusal_code, ContainerText(request.container_index) + ": " + saga.refusal);
  }
  spdlog::info("allocated {} [{}] as {}", request.resource, Join(request.device_ids),
               saga.allocation_id);
  return Status::Ok();
}

void PluginCore::NoteDevicesTakenFromListedPods(const sm::RequestAllocation& request,
                                                const std::vector<ListedHolder>& holders) {
  const sm::Micros age_ms = (request.now - listed_holders_.listed_at()) / 1000;
  for (const auto& holder : holders) {
    spdlog::warn(
        "Allocate of {} [{}] took [{}] from pod {}, which held them in kubelet's last "
        "PodResources listing ({} ms earlier); its allocation is released (and its partition, "
        "if any, deactivated). Either kubelet gave them to a new pod before the next listing, or "
        "something other than kubelet called Allocate (docs/security.md)",
        request.resource, EscapeAndTruncate(Join(request.device_ids), kMaxIdsText),
        Join(holder.devices), EscapeAndTruncate(holder.pod, kMaxIdsText), age_ms);
    if (auto* observer = observer_.load()) observer->RecordDevicesTakenFromListedPod();
  }
}

Status PluginCore::PreStart(const std::string& resource, const std::vector<std::string>& devices) {
  if (!fabric_) return Status::Ok();
  const ResourceDevices* r = inventory_.FindResource(resource);
  if (!r) return NotFound("unknown resource " + resource);
  if (r->kind == sm::DeviceKind::kMdev) return Status::Ok();  // no partition to verify
  std::lock_guard lock(operation_mu_);
  // Verify in FM first: a partition FM lost shows up as drift and is repaired here.
  if (!fabric_sync_.Sync(false, {})) {
    return Unavailable("Fabric Manager is not usable (" + fabric_sync_.problem() +
                       "); cannot verify the partition of " +
                       EscapeAndTruncate(Join(devices), kMaxIdsText));
  }
  ScopedLogContext prestart_scope;
  AddAllocationOfDevices(prestart_scope, *engine_, devices);
  auto saga = sagas_.Run(sm::EnsurePartitionActive{clock_(), devices});
  if (!saga.ok()) return JournalFailure(saga.status());
  if (!saga->refusal.empty()) return Status(saga->refusal_code, saga->refusal);
  return Status::Ok();
}

}  // namespace gfp::plugin::core
