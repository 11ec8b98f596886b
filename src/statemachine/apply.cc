#include "statemachine/apply.h"

#include <algorithm>

#include "statemachine/apply_claims.h"
#include "statemachine/apply_scope.h"

namespace gfp::sm {
namespace {

using events::Event;

class Applier : public ApplyScope {
 public:
  using ApplyScope::ApplyScope;

  void On(const events::PluginStarted& e) {
    s_.fm_enabled = e.fabric_manager_enabled();
    s_.release_grace = std::max<Micros>(0, e.release_grace_micros());  // 0: release at once
    s_.plugin_version = e.version();
    // A new process has no FM connection until it journals one.
    s_.fm_connected = false;
    s_.fm_status_journaled = false;
  }

  void On(const events::InventoryObserved& e) {
    std::map<Bdf, DeviceState> next;
    for (const auto& d : e.devices()) {
      DeviceState device;
      device.bdf = d.bdf();
      device.resource = d.resource();
      device.device_id = d.device_id();
      device.iommu_group = d.iommu_group();
      device.numa_node = std::max(0, d.numa_node());
      device.kind = DeviceKindOf(d.kind());
      device.parent_bdf = d.parent_bdf();
      // Health survives re-observation of the same device.
      if (auto old = s_.devices.find(d.bdf()); old != s_.devices.end()) {
        device.healthy = old->second.healthy;
        device.unhealthy_reason = old->second.unhealthy_reason;
      }
      next[device.bdf] = std::move(device);
    }
    s_.devices = std::move(next);
    s_.inventory_warnings.assign(e.warnings().begin(), e.warnings().end());
  }

  void On(const events::ModuleMappingLoaded& e) {
    std::map<Bdf, ModuleId> by_bdf;
    std::map<ModuleId, Bdf> by_module;
    for (const auto& a : e.assignments()) {
      if (a.module_id() == 0 || by_bdf.count(a.bdf()) || by_module.count(a.module_id())) {
        Anomaly("module mapping " + e.path() + " assigns " + a.bdf() + " -> " +
                std::to_string(a.module_id()) + " twice or to module 0; mapping ignored");
        return;
      }
      by_bdf[a.bdf()] = a.module_id();
      by_module[a.module_id()] = a.bdf();
    }
    s_.module_mapping_path = e.path();
    s_.module_of_bdf = std::move(by_bdf);
    s_.bdf_of_module = std::move(by_module);
  }

  void On(const events::FabricManagerConnected& e) {
    s_.fm_connected = true;
    s_.fm_status_journaled = true;
    s_.fm_address = e.address();
  }

  void On(const events::FabricManagerDisconnected&) {
    s_.fm_connected = false;
    s_.fm_status_journaled = true;
  }

  void On(const events::PartitionTableObserved& e) {
    std::map<PartitionId, PartitionState> next;
    for (const auto& p : e.partitions()) {
      if (next.count(p.id())) {
        Anomaly("partition table lists partition " + std::to_string(p.id()) + " twice; ignored");
        return;
      }
      next[p.id()] = PartitionFromEvent(p);
    }
    s_.partitions = std::move(next);
  }

  void On(const events::DeviceHealthChanged& e) {
    if (!s_.devices.count(e.bdf())) {
      Anomaly("health change for unknown device " + e.bdf());
      return;
    }
    auto it = s_.devices.mutable_value().find(e.bdf());
    it->second.healthy = e.healthy();
    it->second.unhealthy_reason = e.healthy() ? "" : e.reason();
  }

  void On(const events::KubeletRestartObserved&) { s_.kubelet_restarts++; }

  void On(const events::AllocationRequested& e) {
    if (s_.allocations.count(e.allocation_id())) {
      Anomaly("allocation " + e.allocation_id() + " requested twice");
      return;
    }
    Allocation a;
    a.id = e.allocation_id();
    a.resource = e.resource();
    a.devices.assign(e.device_ids().begin(), e.device_ids().end());
    a.container_index = e.container_index();
    a.requested_at = time_;
    s_.allocations[a.id] = std::move(a);
    NoteAllocationId(e.allocation_id());
  }

  void On(const events::AllocationGranted& e) {
    Allocation* a = LiveAllocation(e.allocation_id(), "AllocationGranted");
    if (!a) return;
    if (a->status != AllocationStatus::kRequested) {
      Anomaly("allocation " + a->id + " granted while " + AllocationStatusName(a->status));
      return;
    }
    if (e.has_partition()) {
      auto active = s_.active.find(e.partition_id());
      if (active == s_.active.end()) {
        Anomaly("allocation " + a->id + " granted partition " + std::to_string(e.partition_id()) +
                " which is not active");
        return;
      }
      // Granted a partition already active with its VFs: that list is its VF list from now on.
      if (a->fabric_vfs.empty()) a->fabric_vfs = active->second.vf_bdfs;
      if (a->fabric_vfs != active->second.vf_bdfs) {
        Anomaly("allocation " + a->id + " granted partition " + std::to_string(e.partition_id()) +
                " which is active with other VFs");
        return;
      }
      active->second.owner = a->id;
      active->second.adopted = false;
      a->partition = e.partition_id();
    }
    a->status = AllocationStatus::kGranted;
    a->granted_at = time_;
  }

  void On(const events::AllocationRejected& e) {
    Allocation* a = LiveAllocation(e.allocation_id(), "AllocationRejected");
    if (!a) return;
    if (a->status != AllocationStatus::kRequested) {
      Anomaly("allocation " + a->id + " rejected while " + AllocationStatusName(a->status));
      return;
    }
    Finish(a->id);
  }

  void On(const events::AllocationBound& e) {
    Allocation* a = LiveAllocation(e.allocation_id(), "AllocationBound");
    if (!a) return;
    if (a->status != AllocationStatus::kGranted) {
      Anomaly("allocation " + a->id + " bound while " + AllocationStatusName(a->status));
      return;
    }
    a->status = AllocationStatus::kBound;
    a->pod_namespace = e.pod_namespace();
    a->pod_name = e.pod_name();
    a->container_name = e.container_name();
  }

  void On(const events::AllocationReleased& e) {
    Allocation* a = LiveAllocation(e.allocation_id(), "AllocationReleased");
    if (!a) return;
    if (a->status == AllocationStatus::kRequested) {
      Anomaly("allocation " + a->id + " released before it was granted");
      return;
    }
    Finish(a->id);
  }

  bool StartIntent(PartitionId pid, IntentKind kind, const AllocationId& allocation,
                   const char* event_name, std::vector<Bdf> vf_bdfs = {}) {
    if (!s_.partitions.count(pid)) {
      Anomaly(std::string(event_name) + " for partition " + std::to_string(pid) +
              " which is not in the partition table");
      return false;
    }
    if (auto it = s_.intents.find(pid); it != s_.intents.end()) {
      Anomaly(std::string(event_name) + " for partition " + std::to_string(pid) + " while a " +
              IntentKindName(it->second.kind) + " requested at seq " +
              std::to_string(it->second.requested_seq) + " is pending");
      return false;
    }
    s_.intents[pid] = PendingIntent{kind, allocation, seq_, time_, std::move(vf_bdfs)};
    return true;
  }

  // Ends the pending intent of `kind` on `pid`; false (and an anomaly) when there is none.
  bool EndIntent(PartitionId pid, IntentKind kind, const char* event_name) {
    auto it = s_.intents.find(pid);
    if (it == s_.intents.end() || it->second.kind != kind) {
      Anomaly(std::string(event_name) + " for partition " + std::to_string(pid) +
              " without a pending " + IntentKindName(kind) + " request");
      return false;
    }
    s_.intents.erase(it);
    return true;
  }

  void On(const events::PartitionActivationRequested& e) {
    if (s_.active.count(e.partition_id())) {
      Anomaly("activation requested for partition " + std::to_string(e.partition_id()) +
              " which is already active");
      return;
    }
    std::vector<Bdf> vfs(e.vf_bdfs().begin(), e.vf_bdfs().end());
    if (!StartIntent(e.partition_id(), IntentKind::kActivate, e.allocation_id(),
                     "PartitionActivationRequested", vfs)) {
      return;
    }
    // The first activation journaled for an allocation fixes its VF list (FM's order) for good.
    auto allocation = s_.allocations.find(e.allocation_id());
    if (allocation != s_.allocations.end() && allocation->second.fabric_vfs.empty()) {
      allocation->second.fabric_vfs = std::move(vfs);
    }
  }

  void On(const events::PartitionActivated& e) {
    if (!EndIntent(e.partition_id(), IntentKind::kActivate, "PartitionActivated")) return;
    // FM refuses overlapping activations, so an overlap here means the journal missed a change.
    std::set<Bdf> gpus;
    if (auto p = s_.partitions.find(e.partition_id()); p != s_.partitions.end()) {
      auto devices = DevicesOfPartition(s_, p->second);
      gpus.insert(devices.bdfs.begin(), devices.bdfs.end());
    }
    for (PartitionId other : ActivePartitionsOverlapping(s_, gpus)) {
      Anomaly("partition " + std::to_string(e.partition_id()) + " activated while overlapping " +
              "active partition " + std::to_string(other) + "; the latter is dropped");
      s_.active.erase(other);
    }
    ActivePartition active;
    active.since = time_;
    active.vf_bdfs.assign(e.vf_bdfs().begin(), e.vf_bdfs().end());
    // A re-activation goes back to its granted owner; a first activation is owned from the
    // AllocationGranted that follows it in the same transaction.
    auto owner = s_.allocations.find(e.allocation_id());
    if (owner != s_.allocations.end() && owner->second.partition == e.partition_id() &&
        (owner->second.status == AllocationStatus::kGranted ||
         owner->second.status == AllocationStatus::kBound)) {
      if (owner->second.fabric_vfs == active.vf_bdfs) {
        active.owner = owner->first;
      } else {
        Anomaly("partition " + std::to_string(e.partition_id()) + " re-activated with VFs " +
                "other than allocation " + owner->first + "'s; left without an owner");
      }
    }
    s_.active[e.partition_id()] = std::move(active);
  }

  void On(const events::PartitionActivationFailed& e) {
    EndIntent(e.partition_id(), IntentKind::kActivate, "PartitionActivationFailed");
  }

  void On(const events::PartitionDeactivationRequested& e) {
    if (!s_.active.count(e.partition_id())) {
      Anomaly("deactivation requested for partition " + std::to_string(e.partition_id()) +
              " which is not active");
      return;
    }
    StartIntent(e.partition_id(), IntentKind::kDeactivate, e.for_allocation_id(),
                "PartitionDeactivationRequested");
  }

  void On(const events::PartitionDeactivated& e) {
    if (!EndIntent(e.partition_id(), IntentKind::kDeactivate, "PartitionDeactivated")) return;
    s_.active.erase(e.partition_id());
  }

  void On(const events::PartitionDeactivationFailed& e) {
    EndIntent(e.partition_id(), IntentKind::kDeactivate, "PartitionDeactivationFailed");
  }

  // An FM-only partition that is a granted allocation's own goes back to it.
  void GiveBack(const AllocationId& id, PartitionId pid, ActivePartition& active) {
    auto a = s_.allocations.find(id);
    if (a == s_.allocations.end() || a->second.partition != pid ||
        (a->second.status != AllocationStatus::kGranted &&
         a->second.status != AllocationStatus::kBound) ||
        a->second.fabric_vfs != active.vf_bdfs) {
      Anomaly("drift: partition " + std::to_string(pid) + " adopted for allocation " + id +
              ", which is not a granted allocation of that partition; left without an owner");
      active.vf_bdfs.clear();
      return;
    }
    active.owner = id;
    active.adopted = false;
  }

  void On(const events::DriftDetected& e) {
    const PartitionId pid = e.partition_id();
    switch (e.kind()) {
      case events::DriftDetected::KIND_ACTIVE_IN_FM_ONLY: {
        if (s_.active.count(pid) || !s_.partitions.count(pid)) {
          Anomaly("drift: partition " + std::to_string(pid) +
                  " adopted but it is already active or unknown");
          return;
        }
        std::set<Bdf> gpus;
        auto devices = DevicesOfPartition(s_, s_.partitions.at(pid));
        gpus.insert(devices.bdfs.begin(), devices.bdfs.end());
        if (!ActivePartitionsOverlapping(s_, gpus).empty()) {
          Anomaly("drift: partition " + std::to_string(pid) +
                  " adopted while overlapping an active partition");
          return;
        }
        ActivePartition adopted;
        adopted.adopted = true;
        adopted.since = time_;
        if (!e.owner_allocation_id().empty()) {
          adopted.vf_bdfs.assign(e.vf_bdfs().begin(), e.vf_bdfs().end());
          GiveBack(e.owner_allocation_id(), pid, adopted);
        }
        s_.active[pid] = adopted;
        return;
      }
      case events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY:
        if (!s_.active.erase(pid)) {
          Anomaly("drift: partition " + std::to_string(pid) +
                  " reported inactive in FM but the journal has it inactive too");
        }
        return;
      // Listed so that a new kind fails to compile (-Wswitch) until it is handled here.
      case events::DriftDetected::KIND_UNSPECIFIED:
      case events::DriftDetected_Kind_DriftDetected_Kind_INT_MIN_SENTINEL_DO_NOT_USE_:
      case events::DriftDetected_Kind_DriftDetected_Kind_INT_MAX_SENTINEL_DO_NOT_USE_:
        break;
    }
    // Also a number this build does not know (proto3 keeps it as read).
    Anomaly("drift event of unknown kind " + std::to_string(e.kind()));
  }

  void On(const events::FabricManagerResynced&) {}
};

}  // namespace

PartitionState PartitionFromEvent(const events::Partition& p) {
  PartitionState partition;
  partition.id = p.id();
  partition.physical_ids.assign(p.physical_ids().begin(), p.physical_ids().end());
  partition.nvlinks_available = p.nvlinks_available();
  partition.max_nvlinks = p.max_nvlinks();
  partition.unsupported = p.unsupported();
  return partition;
}

AllocationId AllocationIdFor(std::uint64_t number) {
  return std::string(kAllocationIdPrefix) + std::to_string(number);
}

namespace {

// The body's handler. Every body case is listed, so a new event type fails to compile
// (-Wswitch) until it has one.
void ApplyBody(Applier& a, const events::Event& event) {
  switch (event.body_case()) {
    case Event::kPluginStarted:
      a.On(event.plugin_started());
      break;
    case Event::kInventoryObserved:
      a.On(event.inventory_observed());
      break;
    case Event::kModuleMappingLoaded:
      a.On(event.module_mapping_loaded());
      break;
    case Event::kFabricManagerConnected:
      a.On(event.fabric_manager_connected());
      break;
    case Event::kFabricManagerDisconnected:
      a.On(event.fabric_manager_disconnected());
      break;
    case Event::kPartitionTableObserved:
      a.On(event.partition_table_observed());
      break;
    case Event::kDeviceHealthChanged:
      a.On(event.device_health_changed());
      break;
    case Event::kKubeletRestartObserved:
      a.On(event.kubelet_restart_observed());
      break;
    case Event::kAllocationRequested:
      a.On(event.allocation_requested());
      break;
    case Event::kAllocationGranted:
      a.On(event.allocation_granted());
      break;
    case Event::kAllocationRejected:
      a.On(event.allocation_rejected());
      break;
    case Event::kAllocationBound:
      a.On(event.allocation_bound());
      break;
    case Event::kAllocationReleased:
      a.On(event.allocation_released());
      break;
    case Event::kPartitionActivationRequested:
      a.On(event.partition_activation_requested());
      break;
    case Event::kPartitionActivated:
      a.On(event.partition_activated());
      break;
    case Event::kPartitionActivationFailed:
      a.On(event.partition_activation_failed());
      break;
    case Event::kPartitionDeactivationRequested:
      a.On(event.partition_deactivation_requested());
      break;
    case Event::kPartitionDeactivated:
      a.On(event.partition_deactivated());
      break;
    case Event::kPartitionDeactivationFailed:
      a.On(event.partition_deactivation_failed());
      break;
    case Event::kDriftDetected:
      a.On(event.drift_detected());
      break;
    case Event::kFabricManagerResynced:
      a.On(event.fabric_manager_resynced());
      break;
    case Event::kClaimPrepareRequested:
    case Event::kClaimPrepared:
    case Event::kClaimPrepareFailed:
    case Event::kClaimUnprepareRequested:
    case Event::kClaimUnprepared:
    case Event::kResourceSlicePublished:
      ApplyClaimEvent(a, event);
      break;
    case Event::BODY_NOT_SET:
      a.Anomaly("event without a body (unknown type?)");
      break;
  }
}

}  // namespace

void Apply(State& state, std::uint64_t seq, const events::Event& event) {
  Applier a(state, seq, event.time_unix_micros());
  if (seq != state.last_seq + 1) {
    a.Anomaly("event seq " + std::to_string(seq) + " follows seq " +
              std::to_string(state.last_seq));
  }
  state.last_seq = seq;
  state.last_time = std::max(state.last_time, event.time_unix_micros());
  ApplyBody(a, event);
}

}  // namespace gfp::sm
