#include "journal_text/event_summary.h"

#include <map>
#include <sstream>

#include "common/strings.h"
#include "statemachine/state.h"

namespace gfp::journal_text {
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
  for (const auto& d : x.devices()) ++counts[static_cast<int>(sm::DeviceKindOf(d.kind()))];
  if (counts.empty() || (counts.size() == 1 && counts.begin()->first == 0)) return "";
  std::string out;
  for (const auto& [kind, n] : counts) {
    out += (out.empty() ? " (" : ", ") + std::to_string(n) + " " +
           sm::DeviceKindName(static_cast<sm::DeviceKind>(kind));
  }
  return out + ")";
}

// One Summarize per event type, by family. SummarizeEvent's switch lists every body case, so a
// new event type fails to compile (-Wswitch) until it has text here.

// What the plugin learned about its node and kubelet.
void Summarize(const events::PluginStarted& x, std::ostream& o) {
  o << "plugin " << x.version() << " started, Fabric Manager "
    << (x.fabric_manager_enabled() ? "enabled" : "disabled") << ", release grace "
    << x.release_grace_micros() / 1000 << " ms";
}

void Summarize(const events::InventoryObserved& x, std::ostream& o) {
  o << x.devices_size() << " devices" << KindCounts(x) << ":";
  for (const auto& d : x.devices())
    o << " " << d.bdf() << "(group " << d.iommu_group() << ", numa " << d.numa_node() << ")";
  if (x.devices_size() > 0) o << " resource " << x.devices(0).resource();
  for (const auto& w : x.warnings()) o << "; warning: " << w;
}

void Summarize(const events::ModuleMappingLoaded& x, std::ostream& o) {
  o << x.path() << ":";
  for (const auto& a : x.assignments()) o << " " << a.bdf() << "=" << a.module_id();
}

void Summarize(const events::DeviceHealthChanged& x, std::ostream& o) {
  o << x.bdf() << " " << (x.healthy() ? "Healthy" : "Unhealthy");
  if (!x.reason().empty()) o << ": " << x.reason();
}

void Summarize(const events::KubeletRestartObserved& x, std::ostream& o) {
  o << "kubelet restarted: " << x.reason();
}

// Fabric Manager's connection, its partition table, and the plugin's syncs with it.
void Summarize(const events::FabricManagerConnected& x, std::ostream& o) {
  o << "connected to " << x.address() << " (connect params v" << x.connect_params_version() << ")";
}

void Summarize(const events::FabricManagerDisconnected& x, std::ostream& o) {
  o << "disconnected: " << x.reason();
  if (x.has_fm()) o << " " << Fm(x.fm());
}

void Summarize(const events::PartitionTableObserved& x, std::ostream& o) {
  o << x.partitions_size() << " partitions:";
  for (const auto& p : x.partitions()) {
    o << " " << p.id() << "[" << Join(p.physical_ids()) << "]";
    if (p.active()) o << "*";
    if (p.unsupported() || p.nvlinks_available() < p.max_nvlinks()) o << "(degraded)";
  }
}

void Summarize(const events::DriftDetected& x, std::ostream& o) {
  o << "partition " << x.partition_id() << ": " << x.detail();
}

void Summarize(const events::FabricManagerResynced& x, std::ostream& o) {
  o << "active set [" << Join(x.partition_ids()) << "] handed to Fabric Manager: " << Fm(x.fm());
}

// Allocations.
void Summarize(const events::AllocationRequested& x, std::ostream& o) {
  o << x.allocation_id() << " " << x.resource() << " [" << Join(x.device_ids());
  if (x.device_ids_omitted() > 0) o << " … and " << x.device_ids_omitted() << " more IDs";
  o << "] container " << x.container_index();
}

void Summarize(const events::AllocationGranted& x, std::ostream& o) {
  o << x.allocation_id() << " granted";
  if (x.has_partition()) o << " partition " << x.partition_id();
}

void Summarize(const events::AllocationRejected& x, std::ostream& o) {
  o << x.allocation_id() << " rejected: " << x.reason();
}

void Summarize(const events::AllocationBound& x, std::ostream& o) {
  o << x.allocation_id() << " bound to " << x.pod_namespace() << "/" << x.pod_name()
    << " container " << x.container_name();
}

void Summarize(const events::AllocationReleased& x, std::ostream& o) {
  o << x.allocation_id() << " released (" << events::AllocationReleased::Reason_Name(x.reason())
    << ")";
  if (!x.detail().empty()) o << ": " << x.detail();
}

// Partition activations and deactivations: the intents and Fabric Manager's outcomes.
void Summarize(const events::PartitionActivationRequested& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " activation requested for " << x.allocation_id();
  if (!x.reason().empty()) o << " (" << x.reason() << ")";
  o << Vfs(x.vf_bdfs());
}

void Summarize(const events::PartitionActivated& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " active for " << x.allocation_id() << Vfs(x.vf_bdfs());
}

void Summarize(const events::PartitionActivationFailed& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " activation failed: " << Fm(x.fm());
}

void Summarize(const events::PartitionDeactivationRequested& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " deactivation requested: " << x.reason();
}

void Summarize(const events::PartitionDeactivated& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " inactive";
  if (x.was_already_inactive()) o << " (was already inactive)";
}

void Summarize(const events::PartitionDeactivationFailed& x, std::ostream& o) {
  o << "partition " << x.partition_id() << " deactivation failed: " << Fm(x.fm());
}

// DRA claims and the node's ResourceSlice.
std::string ClaimName(const events::ClaimRef& c) {
  return c.namespace_() + "/" + c.name() + " (uid " + c.uid() + ")";
}

void Summarize(const events::ClaimPrepareRequested& x, std::ostream& o) {
  o << x.allocation_id() << " claim " << ClaimName(x.claim())
    << (x.repair() ? " repair requested: " + x.repair_reason() : " prepare requested") << " [";
  for (int i = 0; i < x.devices_size(); ++i) {
    o << (i ? "," : "") << x.devices(i).request() << "=" << x.devices(i).bdf();
  }
  if (x.devices_omitted() > 0) o << " … and " << x.devices_omitted() << " more devices";
  o << "]";
  if (x.has_partition()) o << " partition " << x.partition_id();
  if (x.reserved_for_size() > 0) o << " for " << Join(x.reserved_for());
}

void Summarize(const events::ClaimPrepared& x, std::ostream& o) {
  o << x.allocation_id() << " claim uid " << x.claim_uid() << " prepared";
}

void Summarize(const events::ClaimPrepareFailed& x, std::ostream& o) {
  o << x.allocation_id() << " claim uid " << x.claim_uid() << " failed: " << x.reason();
}

void Summarize(const events::ClaimUnprepareRequested& x, std::ostream& o) {
  o << x.allocation_id() << " claim uid " << x.claim_uid() << " unprepare requested ("
    << events::ClaimUnprepareRequested::Reason_Name(x.reason()) << ")";
  if (!x.detail().empty()) o << ": " << x.detail();
}

void Summarize(const events::ClaimUnprepared& x, std::ostream& o) {
  o << x.allocation_id() << " claim uid " << x.claim_uid() << " unprepared";
}

void Summarize(const events::ResourceSlicePublished& x, std::ostream& o) {
  o << "slice " << x.slice_name() << " generation " << x.generation() << ": " << x.device_count()
    << " devices, sha256 " << x.devices_sha256();
}

}  // namespace

std::string SummarizeEvent(const Event& e) {
  // One stream per thread, emptied per call: constructing an ostringstream (its locale) cost
  // more than the text itself on `journal history`'s hundreds of thousands of lines. No
  // Summarize sets a format flag, so an emptied stream is as good as a new one.
  thread_local std::ostringstream o;
  o.str(std::string());
  o.clear();
  switch (e.body_case()) {
    case Event::kPluginStarted:
      Summarize(e.plugin_started(), o);
      break;
    case Event::kInventoryObserved:
      Summarize(e.inventory_observed(), o);
      break;
    case Event::kModuleMappingLoaded:
      Summarize(e.module_mapping_loaded(), o);
      break;
    case Event::kDeviceHealthChanged:
      Summarize(e.device_health_changed(), o);
      break;
    case Event::kKubeletRestartObserved:
      Summarize(e.kubelet_restart_observed(), o);
      break;
    case Event::kFabricManagerConnected:
      Summarize(e.fabric_manager_connected(), o);
      break;
    case Event::kFabricManagerDisconnected:
      Summarize(e.fabric_manager_disconnected(), o);
      break;
    case Event::kPartitionTableObserved:
      Summarize(e.partition_table_observed(), o);
      break;
    case Event::kDriftDetected:
      Summarize(e.drift_detected(), o);
      break;
    case Event::kFabricManagerResynced:
      Summarize(e.fabric_manager_resynced(), o);
      break;
    case Event::kAllocationRequested:
      Summarize(e.allocation_requested(), o);
      break;
    case Event::kAllocationGranted:
      Summarize(e.allocation_granted(), o);
      break;
    case Event::kAllocationRejected:
      Summarize(e.allocation_rejected(), o);
      break;
    case Event::kAllocationBound:
      Summarize(e.allocation_bound(), o);
      break;
    case Event::kAllocationReleased:
      Summarize(e.allocation_released(), o);
      break;
    case Event::kPartitionActivationRequested:
      Summarize(e.partition_activation_requested(), o);
      break;
    case Event::kPartitionActivated:
      Summarize(e.partition_activated(), o);
      break;
    case Event::kPartitionActivationFailed:
      Summarize(e.partition_activation_failed(), o);
      break;
    case Event::kPartitionDeactivationRequested:
      Summarize(e.partition_deactivation_requested(), o);
      break;
    case Event::kPartitionDeactivated:
      Summarize(e.partition_deactivated(), o);
      break;
    case Event::kPartitionDeactivationFailed:
      Summarize(e.partition_deactivation_failed(), o);
      break;
    case Event::kClaimPrepareRequested:
      Summarize(e.claim_prepare_requested(), o);
      break;
    case Event::kClaimPrepared:
      Summarize(e.claim_prepared(), o);
      break;
    case Event::kClaimPrepareFailed:
      Summarize(e.claim_prepare_failed(), o);
      break;
    case Event::kClaimUnprepareRequested:
      Summarize(e.claim_unprepare_requested(), o);
      break;
    case Event::kClaimUnprepared:
      Summarize(e.claim_unprepared(), o);
      break;
    case Event::kResourceSlicePublished:
      Summarize(e.resource_slice_published(), o);
      break;
    case Event::BODY_NOT_SET:
      o << "(no body)";
      break;
  }
  return o.str();
}

}  // namespace gfp::journal_text
