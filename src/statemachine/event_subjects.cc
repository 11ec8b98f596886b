#include "statemachine/event_subjects.h"

#include <algorithm>

namespace gfp::sm {
namespace {

// The partition an event is about, if any (FabricManagerResynced names several).
void AddPartitions(const events::Event& e, std::vector<std::string>& out) {
  switch (e.body_case()) {
    case events::Event::kAllocationGranted:
      if (e.allocation_granted().has_partition()) {
        out.push_back(PartitionSubject(e.allocation_granted().partition_id()));
      }
      return;
    case events::Event::kPartitionActivationRequested:
      out.push_back(PartitionSubject(e.partition_activation_requested().partition_id()));
      return;
    case events::Event::kPartitionActivated:
      out.push_back(PartitionSubject(e.partition_activated().partition_id()));
      return;
    case events::Event::kPartitionActivationFailed:
      out.push_back(PartitionSubject(e.partition_activation_failed().partition_id()));
      return;
    case events::Event::kPartitionDeactivationRequested:
      out.push_back(PartitionSubject(e.partition_deactivation_requested().partition_id()));
      return;
    case events::Event::kPartitionDeactivated:
      out.push_back(PartitionSubject(e.partition_deactivated().partition_id()));
      return;
    case events::Event::kPartitionDeactivationFailed:
      out.push_back(PartitionSubject(e.partition_deactivation_failed().partition_id()));
      return;
    case events::Event::kDriftDetected:
      out.push_back(PartitionSubject(e.drift_detected().partition_id()));
      return;
    case events::Event::kFabricManagerResynced:
      for (auto id : e.fabric_manager_resynced().partition_ids()) {
        out.push_back(PartitionSubject(id));
      }
      return;
    default:
      return;
  }
}

template <typename Ids>
void AddDeviceList(const Ids& ids, std::vector<std::string>& out) {
  for (const auto& id : ids) {
    if (!id.empty()) out.push_back(DeviceSubject(id));
  }
}

void AddDevices(const events::Event& e, std::vector<std::string>& out) {
  switch (e.body_case()) {
    case events::Event::kInventoryObserved:
      for (const auto& d : e.inventory_observed().devices()) {
        if (!d.bdf().empty()) out.push_back(DeviceSubject(d.bdf()));
        if (!d.parent_bdf().empty()) out.push_back(DeviceSubject(d.parent_bdf()));
      }
      return;
    case events::Event::kModuleMappingLoaded:
      for (const auto& a : e.module_mapping_loaded().assignments()) {
        if (!a.bdf().empty()) out.push_back(DeviceSubject(a.bdf()));
      }
      return;
    case events::Event::kDeviceHealthChanged:
      if (!e.device_health_changed().bdf().empty()) {
        out.push_back(DeviceSubject(e.device_health_changed().bdf()));
      }
      return;
    case events::Event::kAllocationRequested:
      AddDeviceList(e.allocation_requested().device_ids(), out);
      return;
    case events::Event::kPartitionActivationRequested:
      AddDeviceList(e.partition_activation_requested().vf_bdfs(), out);
      return;
    case events::Event::kPartitionActivated:
      AddDeviceList(e.partition_activated().vf_bdfs(), out);
      return;
    default:
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
  AddPartitions(event, out);
  AddDevices(event, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gfp::sm
