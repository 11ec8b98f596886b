// Commands: what the adapters ask the state machine to decide about. Each carries every outside
// fact it needs, including the time, so decide() needs no I/O and no clock, and its name (kName).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

struct StartPlugin {
  static constexpr std::string_view kName = "StartPlugin";
  Micros now = 0;
  std::string version;
  bool fabric_manager_enabled = false;
  std::string node_name;
  Micros release_grace = kDefaultReleaseGrace;
};

struct ObserveInventory {
  static constexpr std::string_view kName = "ObserveInventory";
  Micros now = 0;
  std::vector<events::Device> devices;
  std::vector<std::string> warnings;
};

struct ObserveModuleMapping {
  static constexpr std::string_view kName = "ObserveModuleMapping";
  Micros now = 0;
  std::string path;
  std::vector<events::ModuleAssignment> assignments;
};

struct ObserveDeviceHealth {
  static constexpr std::string_view kName = "ObserveDeviceHealth";
  Micros now = 0;
  Bdf bdf;
  bool healthy = true;
  std::string reason;
};

struct ObserveFabricManagerConnection {
  static constexpr std::string_view kName = "ObserveFabricManagerConnection";
  Micros now = 0;
  bool connected = false;
  std::string address;
  std::uint32_t connect_params_version = 0;
  std::string reason;   // when disconnected
  events::FmResult fm;  // when disconnected by a failed call
};

// FM's supported-partition table with its isActive flags, and the unsupported list. Records a
// changed table, and journals and repairs drift between FM's active set and the journal's.
struct ObserveFabricState {
  static constexpr std::string_view kName = "ObserveFabricState";
  Micros now = 0;
  std::vector<events::Partition> partitions;
  // Allocations whose pods still hold their devices (from the latest successful PodResources
  // List). A partition the journal thinks active but FM does not is re-activated only for them;
  // when unknown (no successful List yet), every live allocation counts as held.
  bool pod_holders_known = false;
  std::vector<AllocationId> held_allocations;
};

struct ObserveKubeletRestart {
  static constexpr std::string_view kName = "ObserveKubeletRestart";
  Micros now = 0;
  std::string reason;
};

// One container request of a kubelet Allocate call.
struct RequestAllocation {
  static constexpr std::string_view kName = "RequestAllocation";
  Micros now = 0;
  std::string resource;
  std::vector<std::string> device_ids;
  std::uint32_t container_index = 0;
};

// The outcome of an FM call the state machine asked for (an Effect).
struct RecordFabricManagerOutcome {
  static constexpr std::string_view kName = "RecordFabricManagerOutcome";
  Micros now = 0;
  IntentKind kind = IntentKind::kActivate;
  PartitionId partition_id = 0;
  events::FmResult fm;  // code 0 = success
  // Resolved at start-up for a request whose caller is gone (docs/recovery.md): an allocation
  // waiting on this transition is rejected instead of continued.
  bool interrupted = false;
  // Why the caller is gone when the plugin did not stop (e.g. journaling the outcome failed);
  // empty: the plugin stopped.
  std::string interrupted_cause{};
};

// Rejects allocations still `requested` with no transition pending: their caller (a kubelet
// Allocate) ended with the process that served it.
struct AbandonInterruptedRequests {
  static constexpr std::string_view kName = "AbandonInterruptedRequests";
  Micros now = 0;
  std::string cause{};  // as RecordFabricManagerOutcome::interrupted_cause
};

// PreStartContainer: make sure the devices' partition is active, re-activating it if needed.
struct EnsurePartitionActive {
  static constexpr std::string_view kName = "EnsurePartitionActive";
  Micros now = 0;
  std::vector<Bdf> device_ids;
};

// One container as PodResources List reported it.
struct PodContainerDevices {
  std::string pod_namespace;
  std::string pod_name;
  std::string container_name;
  std::string resource;
  std::vector<std::string> device_ids;
};

// Pods seen holding devices: journals AllocationBound the first time an allocation's devices
// are seen in a container.
struct ObservePodResources {
  static constexpr std::string_view kName = "ObservePodResources";
  Micros now = 0;
  std::vector<PodContainerDevices> containers;
};

// Release an allocation (its devices are unused) and deactivate its partition.
struct ReleaseAllocation {
  static constexpr std::string_view kName = "ReleaseAllocation";
  Micros now = 0;
  AllocationId allocation_id;
  events::AllocationReleased::Reason reason = events::AllocationReleased::REASON_DEVICES_UNUSED;
  std::string detail;
};

// Deactivate an active partition that no live allocation owns (adopted, or orphaned by a failed
// deactivation).
struct ReleaseOrphanPartition {
  static constexpr std::string_view kName = "ReleaseOrphanPartition";
  Micros now = 0;
  PartitionId partition_id = 0;
  std::string reason;
};

// FM restarted in resiliency mode and waits for the active set: hand it the journal's.
struct ResyncFabricManager {
  static constexpr std::string_view kName = "ResyncFabricManager";
  Micros now = 0;
};

struct RecordResyncOutcome {
  static constexpr std::string_view kName = "RecordResyncOutcome";
  Micros now = 0;
  std::vector<PartitionId> partition_ids;
  events::FmResult fm;
};

// DRA (SPEC §11), NodePrepareResources for one claim: the claim as the API server returned it,
// with our driver's results. Repeated for a prepared claim, it re-checks and repairs.
struct PrepareClaim {
  static constexpr std::string_view kName = "PrepareClaim";
  Micros now = 0;
  events::ClaimRef claim;
  std::vector<events::ClaimDevice> devices;  // the allocation result's order
  std::vector<std::string> reserved_for;     // "namespace/name" of status.reservedFor's pods
  std::string pod_claim_name;
  // For a claim already prepared: whether its CDI and metadata files are all in place.
  bool files_present = true;
};

// The CDI and metadata files of a claim at ClaimProgress::kWriteFiles are written: it is prepared.
struct RecordClaimFiles {
  static constexpr std::string_view kName = "RecordClaimFiles";
  Micros now = 0;
  std::string claim_uid;
};

// NodeUnprepareResources for one claim, or reconciliation's unprepare of a claim that is gone.
struct UnprepareClaim {
  static constexpr std::string_view kName = "UnprepareClaim";
  Micros now = 0;
  std::string claim_uid;
  events::ClaimUnprepareRequested::Reason reason = events::ClaimUnprepareRequested::REASON_KUBELET;
  std::string detail;
};

// The files of a claim at ClaimProgress::kRemoveFiles are gone: it is unprepared.
struct RecordClaimFilesRemoved {
  static constexpr std::string_view kName = "RecordClaimFilesRemoved";
  Micros now = 0;
  std::string claim_uid;
};

// This node's ResourceSlice was written to the API server; journaled when it differs from the
// last one journaled.
struct RecordResourceSlicePublished {
  static constexpr std::string_view kName = "RecordResourceSlicePublished";
  Micros now = 0;
  ResourceSliceState slice;
};

using Command =
    std::variant<StartPlugin, ObserveInventory, ObserveModuleMapping, ObserveDeviceHealth,
                 ObserveFabricManagerConnection, ObserveFabricState, ObserveKubeletRestart,
                 RequestAllocation, RecordFabricManagerOutcome, EnsurePartitionActive,
                 ObservePodResources, ReleaseAllocation, ReleaseOrphanPartition,
                 ResyncFabricManager, RecordResyncOutcome, AbandonInterruptedRequests, PrepareClaim,
                 RecordClaimFiles, UnprepareClaim, RecordClaimFilesRemoved,
                 RecordResourceSlicePublished>;

// The command's name, for messages: each alternative's kName (a command without one does not
// compile).
inline std::string_view CommandName(const Command& command) {
  return std::visit([](const auto& c) { return std::decay_t<decltype(c)>::kName; }, command);
}

}  // namespace gfp::sm
