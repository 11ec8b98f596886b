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

void AddClaimPrepare(const events::ClaimPrepareRequested& x, std::vector<std::string>& out) {
  out.push_back(ClaimSubject(x.claim().uid()));
  out.push_back(ClaimNameSubject(x.claim().namespace_(), x.claim().name()));
  for (const auto& d : x.devices()) {
    if (!d.bdf().empty()) out.push_back(DeviceSubject(d.bdf()));
  }
  if (x.has_partition()) out.push_back(PartitionSubject(x.partition_id()));
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
    case Event::kClaimPrepareRequested:
      AddClaimPrepare(e.claim_prepare_requested(), out);
      return;
    case Event::kClaimPrepared:
      out.push_back(ClaimSubject(e.claim_prepared().claim_uid()));
      return;
    case Event::kClaimPrepareFailed:
      out.push_back(ClaimSubject(e.claim_prepare_failed().claim_uid()));
      return;
    case Event::kClaimUnprepareRequested:
      out.push_back(ClaimSubject(e.claim_unprepare_requested().claim_uid()));
      return;
    case Event::kClaimUnprepared:
      out.push_back(ClaimSubject(e.claim_unprepared().claim_uid()));
      return;
    // No partition or device as subject (allocation IDs are not tags).
    case Event::kResourceSlicePublished:
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

// Every body case is listed, so a new event type says which allocation it names, if any.
std::string AllocationIdOf(const Event& e) {  // NOLINT(readability-function-size): one switch
  switch (e.body_case()) {
    case Event::kAllocationRequested:
      return e.allocation_requested().allocation_id();
    case Event::kAllocationGranted:
      return e.allocation_granted().allocation_id();
    case Event::kAllocationRejected:
      return e.allocation_rejected().allocation_id();
    case Event::kAllocationBound:
      return e.allocation_bound().allocation_id();
    case Event::kAllocationReleased:
      return e.allocation_released().allocation_id();
    case Event::kPartitionActivationRequested:
      return e.partition_activation_requested().allocation_id();
    case Event::kPartitionActivated:
      return e.partition_activated().allocation_id();
    case Event::kPartitionActivationFailed:
      return e.partition_activation_failed().allocation_id();
    case Event::kPartitionDeactivationRequested:
      return e.partition_deactivation_requested().for_allocation_id();
    case Event::kDriftDetected:
      return e.drift_detected().owner_allocation_id();
    case Event::kClaimPrepareRequested:
      return e.claim_prepare_requested().allocation_id();
    case Event::kClaimPrepared:
      return e.claim_prepared().allocation_id();
    case Event::kClaimPrepareFailed:
      return e.claim_prepare_failed().allocation_id();
    case Event::kClaimUnprepareRequested:
      return e.claim_unprepare_requested().allocation_id();
    case Event::kClaimUnprepared:
      return e.claim_unprepared().allocation_id();
    case Event::kPluginStarted:
    case Event::kInventoryObserved:
    case Event::kModuleMappingLoaded:
    case Event::kFabricManagerConnected:
    case Event::kFabricManagerDisconnected:
    case Event::kPartitionTableObserved:
    case Event::kDeviceHealthChanged:
    case Event::kKubeletRestartObserved:
    case Event::kPartitionDeactivated:
    case Event::kPartitionDeactivationFailed:
    case Event::kFabricManagerResynced:
    case Event::kResourceSlicePublished:
    case Event::BODY_NOT_SET:
      return "";
  }
  return "";
}

}  // namespace

std::string EventAllocationId(const events::Event& event) { return AllocationIdOf(event); }

std::string EventClaimUid(const events::Event& e) {
  if (e.has_claim_prepare_requested()) return e.claim_prepare_requested().claim().uid();
  if (e.has_claim_prepared()) return e.claim_prepared().claim_uid();
  if (e.has_claim_prepare_failed()) return e.claim_prepare_failed().claim_uid();
  if (e.has_claim_unprepare_requested()) return e.claim_unprepare_requested().claim_uid();
  if (e.has_claim_unprepared()) return e.claim_unprepared().claim_uid();
  return "";
}

std::string PartitionSubject(std::uint32_t partition_id) {
  return "p:" + std::to_string(partition_id);
}

std::string DeviceSubject(std::string_view device_id) { return "d:" + std::string(device_id); }

std::string ClaimSubject(std::string_view claim_uid) { return "c:" + std::string(claim_uid); }

std::string ClaimNameSubject(std::string_view claim_namespace, std::string_view claim_name) {
  return "n:" + std::string(claim_namespace) + "/" + std::string(claim_name);
}

std::vector<std::string> EventSubjects(const events::Event& event) {
  std::vector<std::string> out;
  AddSubjects(event, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace gfp::sm
