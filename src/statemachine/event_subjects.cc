#include "statemachine/event_subjects.h"

#include <algorithm>

namespace gfp::sm {
namespace {

using events::Event;

template <typename Ids>
void AddDeviceList(const Ids& ids, std::vector<std::string>& out) {
  for (const auto& id : ids) {
    if (!id.empty()) out.push_back(DeviceSubject(id));
  }
}

void AddInventory(const events::InventoryObserved& x, std::vector<std::string>& out) {
  for (const auto& d : x.devices()) {
    if (!d.bdf().empty()) out.push_back(DeviceSubject(d.bdf()));
    if (!d.parent_bdf().empty()) out.push_back(DeviceSubject(d.parent_bdf()));
  }
}

// The partitions and devices an event names. Every body case is listed, so a new event type
// fails to compile (-Wswitch) until it says which subjects it has, if any.
void AddSubjects(const Event& e, std::vector<std::string>& out) {
  switch (e.body_case()) {
    case Event::kInventoryObserved:
      AddInventory(e.inventory_observed(), out);
      return;
    case Event::kModuleMappingLoaded:
      for (const auto& a : e.module_mapping_loaded().assignments()) {
        if (!a.bdf().empty()) out.push_back(DeviceSubject(a.bdf()));
      }
      return;
    case Event::kDeviceHealthChanged:
      if (!e.device_health_changed().bdf().empty()) {
        out.push_back(DeviceSubject(e.device_health_changed().bdf()));
      }
      return;
    case Event::kAllocationRequested:
      AddDeviceList(e.allocation_requested().device_ids(), out);
      return;
    case Event::kAllocationGranted:
      if (e.allocation_granted().has_partition()) {
        out.push_back(PartitionSubject(e.allocation_granted().partition_id()));
      }
      return;
    case Event::kPartitionActivationRequested:
      out.push_back(PartitionSubject(e.partition_activation_requested().partition_id()));
      AddDeviceList(e.partition_activation_requested().vf_bdfs(), out);
      return;
    case Event::kPartitionActivated:
      out.push_back(PartitionSubject(e.partition_activated().partition_id()));
      AddDeviceList(e.partition_activated().vf_bdfs(), out);
      return;
    case Event::kPartitionActivationFailed:
      out.push_back(PartitionSubject(e.partition_activation_failed().partition_id()));
      return;
    case Event::kPartitionDeactivationRequested:
      out.push_back(PartitionSubject(e.partition_deactivation_requested().partition_id()));
      return;
    case Event::kPartitionDeactivated:
      out.push_back(PartitionSubject(e.partition_deactivated().partition_id()));
      return;
    case Event::kPartitionDeactivationFailed:
      out.push_back(PartitionSubject(e.partition_deactivation_failed().partition_id()));
      return;
    case Event::kDriftDetected:
      out.push_back(PartitionSubject(e.drift_detected().partition_id()));
      return;
    case Event::kFabricManagerResynced:
      for (auto id : e.fabric_manager_resynced().partition_ids()) {
        out.push_back(PartitionSubject(id));
      }
      return;
    // No partition or device as subject (allocation IDs are not tags).
    case Event::kPluginStarted:
    case Event::kFabricManagerConnected:
    case Event::kFabricManagerDisconnected:
    case Event::kPartitionTableObserved:
    case Event::kKubeletRestartObserved:
    case Event::kAllocationRejected:
    case Event::kAllocationBound:
    case Event::kAllocationReleased:
    case Event::BODY_NOT_SET:
      return;
  }
}

}  // namespace

std::string PartitionSubject(std::uint32_t partition_id) {
  return "p:" + std::to_string(partition_id);
}

std::string DeviceSubject(std::string_view device_id) { return "d:" + std::string(device_id); }

std::vector<std::string> EventSubjects(const events::Event& event) {
  std::vector<std::string> out;
  AddSubjects(event, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gfp::sm
