#include "journal_text/event_summary.h"

#include <map>
#include <sstream>

#include "common/strings.h"
#include "statemachine/state.h"

namespace gfp::sm {
namespace {

using events::Event;

std::string Fm(const events::FmResult& fm) {
  std::string out = fm.name().empty() ? "code " + std::to_string(fm.code()) : fm.name();
  if (!fm.message().empty()) out += " (" + fm.message() + ")";
  return out;
}

// " vfs=[a,b]" for an activation with vGPU VFs; nothing for whole GPUs.
std::string Vfs(const google::protobuf::RepeatedPtrField<std::string>& vfs) {
  return vfs.empty() ? "" : " vfs=[" + Join(vfs) + "]";
}

// " (2 passthrough, 4 vgpu-vf)": how many devices of each kind, when any is not passthrough.
std::string KindCounts(const events::InventoryObserved& x) {
  std::map<int, int> counts;
  for (const auto& d : x.devices()) ++counts[static_cast<int>(DeviceKindOf(d.kind()))];
  if (counts.empty() || (counts.size() == 1 && counts.begin()->first == 0)) return "";
  std::string out;
  for (const auto& [kind, n] : counts) {
    out += (out.empty() ? " (" : ", ") + std::to_string(n) + " " +
           DeviceKindName(static_cast<DeviceKind>(kind));
  }
  return out + ")";
}

void SummarizeInventory(const events::InventoryObserved& x, std::ostream& o) {
  o << x.devices_size() << " devices" << KindCounts(x) << ":";
  for (const auto& d : x.devices())
    o << " " << d.bdf() << "(group " << d.iommu_group() << ", numa " << d.numa_node() << ")";
  if (x.devices_size() > 0) o << " resource " << x.devices(0).resource();
  for (const auto& w : x.warnings()) o << "; warning: " << w;
}

// What the plugin learned about its node and kubelet.
void SummarizeNodeEvent(const Event& e, std::ostream& o) {
  switch (e.body_case()) {
    case Event::kPluginStarted: {
      const auto& x = e.plugin_started();
      o << "plugin " << x.version() << " started, Fabric Manager "
        << (x.fabric_manager_enabled() ? "enabled" : "disabled") << ", release grace "
        << x.release_grace_micros() / 1000 << " ms";
      break;
    }
    case Event::kInventoryObserved:
      SummarizeInventory(e.inventory_observed(), o);
      break;
    case Event::kModuleMappingLoaded: {
      const auto& x = e.module_mapping_loaded();
      o << x.path() << ":";
      for (const auto& a : x.assignments()) o << " " << a.bdf() << "=" << a.module_id();
      break;
    }
    case Event::kDeviceHealthChanged: {
      const auto& x = e.device_health_changed();
      o << x.bdf() << " " << (x.healthy() ? "Healthy" : "Unhealthy");
      if (!x.reason().empty()) o << ": " << x.reason();
      break;
    }
    case Event::kKubeletRestartObserved:
      o << "kubelet restarted: " << e.kubelet_restart_observed().reason();
      break;
    default:
      break;
  }
}

// Fabric Manager's connection, its partition table, and the plugin's syncs with it.
void SummarizeFabricManagerEvent(const Event& e, std::ostream& o) {
  switch (e.body_case()) {
    case Event::kFabricManagerConnected:
      o << "connected to " << e.fabric_manager_connected().address() << " (connect params v"
        << e.fabric_manager_connected().connect_params_version() << ")";
      break;
    case Event::kFabricManagerDisconnected:
      o << "disconnected: " << e.fabric_manager_disconnected().reason();
      if (e.fabric_manager_disconnected().has_fm())
        o << " " << Fm(e.fabric_manager_disconnected().fm());
      break;
    case Event::kPartitionTableObserved: {
      const auto& x = e.partition_table_observed();
      o << x.partitions_size() << " partitions:";
      for (const auto& p : x.partitions()) {
        o << " " << p.id() << "[" << Join(p.physical_ids()) << "]";
        if (p.active()) o << "*";
        if (p.unsupported() || p.nvlinks_available() < p.max_nvlinks()) o << "(degraded)";
      }
      break;
    }
    case Event::kDriftDetected:
      o << "partition " << e.drift_detected().partition_id() << ": " << e.drift_detected().detail();
      break;
    case Event::kFabricManagerResynced:
      o << "active set [" << Join(e.fabric_manager_resynced().partition_ids())
        << "] handed to Fabric Manager: " << Fm(e.fabric_manager_resynced().fm());
      break;
    default:
      break;
  }
}

void SummarizeAllocationEvent(const Event& e, std::ostream& o) {
  switch (e.body_case()) {
    case Event::kAllocationRequested: {
      const auto& x = e.allocation_requested();
      o << x.allocation_id() << " " << x.resource() << " [" << Join(x.device_ids());
      if (x.device_ids_omitted() > 0) o << " … and " << x.device_ids_omitted() << " more IDs";
      o << "] container " << x.container_index();
      break;
    }
    case Event::kAllocationGranted: {
      const auto& x = e.allocation_granted();
      o << x.allocation_id() << " granted";
      if (x.has_partition()) o << " partition " << x.partition_id();
      break;
    }
    case Event::kAllocationRejected:
      o << e.allocation_rejected().allocation_id()
        << " rejected: " << e.allocation_rejected().reason();
      break;
    case Event::kAllocationBound: {
      const auto& x = e.allocation_bound();
      o << x.allocation_id() << " bound to " << x.pod_namespace() << "/" << x.pod_name()
        << " container " << x.container_name();
      break;
    }
    case Event::kAllocationReleased: {
      const auto& x = e.allocation_released();
      o << x.allocation_id() << " released (" << events::AllocationReleased::Reason_Name(x.reason())
        << ")";
      if (!x.detail().empty()) o << ": " << x.detail();
      break;
    }
    default:
      break;
  }
}

// Partition activations and deactivations: the intents and Fabric Manager's outcomes.
void SummarizePartitionEvent(const Event& e, std::ostream& o) {
  switch (e.body_case()) {
    case Event::kPartitionActivationRequested: {
      const auto& x = e.partition_activation_requested();
      o << "partition " << x.partition_id() << " activation requested for " << x.allocation_id();
      if (!x.reason().empty()) o << " (" << x.reason() << ")";
      o << Vfs(x.vf_bdfs());
      break;
    }
    case Event::kPartitionActivated:
      o << "partition " << e.partition_activated().partition_id() << " active for "
        << e.partition_activated().allocation_id() << Vfs(e.partition_activated().vf_bdfs());
      break;
    case Event::kPartitionActivationFailed:
      o << "partition " << e.partition_activation_failed().partition_id()
        << " activation failed: " << Fm(e.partition_activation_failed().fm());
      break;
    case Event::kPartitionDeactivationRequested:
      o << "partition " << e.partition_deactivation_requested().partition_id()
        << " deactivation requested: " << e.partition_deactivation_requested().reason();
      break;
    case Event::kPartitionDeactivated:
      o << "partition " << e.partition_deactivated().partition_id() << " inactive";
      if (e.partition_deactivated().was_already_inactive()) o << " (was already inactive)";
      break;
    case Event::kPartitionDeactivationFailed:
      o << "partition " << e.partition_deactivation_failed().partition_id()
        << " deactivation failed: " << Fm(e.partition_deactivation_failed().fm());
      break;
    default:
      break;
  }
}

}  // namespace

std::string SummarizeEvent(const Event& e) {
  std::ostringstream o;
  // Every body case is listed, so a new event type fails to compile (-Wswitch) until it has text.
  switch (e.body_case()) {
    case Event::kPluginStarted:
    case Event::kInventoryObserved:
    case Event::kModuleMappingLoaded:
    case Event::kDeviceHealthChanged:
    case Event::kKubeletRestartObserved:
      SummarizeNodeEvent(e, o);
      break;
    case Event::kFabricManagerConnected:
    case Event::kFabricManagerDisconnected:
    case Event::kPartitionTableObserved:
    case Event::kDriftDetected:
    case Event::kFabricManagerResynced:
      SummarizeFabricManagerEvent(e, o);
      break;
    case Event::kAllocationRequested:
    case Event::kAllocationGranted:
    case Event::kAllocationRejected:
    case Event::kAllocationBound:
    case Event::kAllocationReleased:
      SummarizeAllocationEvent(e, o);
      break;
    case Event::kPartitionActivationRequested:
    case Event::kPartitionActivated:
    case Event::kPartitionActivationFailed:
    case Event::kPartitionDeactivationRequested:
    case Event::kPartitionDeactivated:
    case Event::kPartitionDeactivationFailed:
      SummarizePartitionEvent(e, o);
      break;
    case Event::BODY_NOT_SET:
      o << "(no body)";
      break;
  }
  return o.str();
}

}  // namespace gfp::sm
