// The plugin's state: everything the journal says about devices, Fabric Manager partitions and
// allocations. Built only by apply() (apply.h) from journaled events, so replaying the journal
// rebuilds it exactly. Plain data: no I/O, no clock, no threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "statemachine/copy_on_write.h"

namespace gfp::sm {

using Bdf = std::string;
using PartitionId = std::uint32_t;
using ModuleId = std::uint32_t;
using AllocationId = std::string;
using Micros = std::int64_t;

inline constexpr Micros kDefaultReleaseGrace = 30'000'000;

// Which kind of kubelet device (events.proto DeviceKind; same values).
enum class DeviceKind { kPciPassthrough = 0, kMdev = 1, kVgpuVf = 2 };
const char* DeviceKindName(DeviceKind kind);  // "passthrough", "mdev", "vgpu-vf"
// A journaled kind number (events.DeviceKind); a number this build does not know reads as
// passthrough, the kind of every device journaled before kinds existed.
DeviceKind DeviceKindOf(int journaled_kind);

struct DeviceState {
  Bdf bdf;  // the device's kubelet ID: a PCI address (GPU or VF), or an mdev's UUID
  std::string resource;
  std::string device_id;
  std::string iommu_group;
  int numa_node = 0;
  bool healthy = true;
  std::string unhealthy_reason;
  DeviceKind kind = DeviceKind::kPciPassthrough;
  Bdf parent_bdf;  // the GPU an mdev or a VF lives on; empty for passthrough

  bool operator==(const DeviceState&) const = default;
};

struct PartitionState {
  PartitionId id = 0;
  std::vector<ModuleId> physical_ids;  // FM's order
  std::uint32_t nvlinks_available = 0;
  std::uint32_t max_nvlinks = 0;
  bool unsupported = false;

  // Fewer links than the maximum, or listed as unsupported by FM: never offered to a VM.
  bool degraded() const { return unsupported || nvlinks_available < max_nvlinks; }
  bool operator==(const PartitionState&) const = default;
};

// Allocation lifecycle; values only grow (a transition to a smaller value is an anomaly).
enum class AllocationStatus {
  kRequested = 0,
  kGranted = 1,
  kBound = 2,
  kReleased = 3,
  kRejected = 4
};
const char* AllocationStatusName(AllocationStatus status);

// A DRA claim (SPEC §11) as its ClaimPrepareRequested journaled it. A claim is prepared through
// an allocation (Allocation::claim) that owns its partition like any other.
struct Claim {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::vector<std::string> requests;      // the request each of the allocation's devices answers
  std::vector<std::string> reserved_for;  // pods of status.reservedFor, "namespace/name"
  std::string pod_claim_name;             // resource.kubernetes.io/pod-claim-name, if any
  // Its CDI and metadata files were written (ClaimPrepared) since it was last (re)prepared.
  bool prepared = false;

  bool operator==(const Claim&) const = default;
};

struct Allocation {
  AllocationId id;
  std::string resource;
  std::vector<Bdf> devices;  // kubelet's request order
  std::uint32_t container_index = 0;
  AllocationStatus status = AllocationStatus::kRequested;
  std::optional<PartitionId> partition;  // with Fabric Manager: the partition granted
  Micros requested_at = 0;
  Micros granted_at = 0;
  std::string pod_namespace;  // set once bound
  std::string pod_name;
  std::string container_name;
  // vGPU VFs with Fabric Manager: the VF list of the first activation journaled for this
  // allocation (partition GPU order); every re-activation for it passes the same list.
  std::vector<Bdf> fabric_vfs;
  // Set for a DRA claim's allocation: granted when its partition is ready, never bound (pods
  // reach its devices through CDI, not through kubelet's device plugin Allocate).
  std::optional<Claim> claim;

  bool live() const {
    return status == AllocationStatus::kRequested || status == AllocationStatus::kGranted ||
           status == AllocationStatus::kBound;
  }
  bool operator==(const Allocation&) const = default;
};

enum class IntentKind { kActivate = 0, kDeactivate = 1 };
const char* IntentKindName(IntentKind kind);

// A partition transition journaled as requested whose outcome is not journaled yet.
struct PendingIntent {
  IntentKind kind = IntentKind::kActivate;
  AllocationId allocation_id;  // activation: the owner-to-be; deactivation: who it clears way for
  std::uint64_t requested_seq = 0;
  Micros requested_at = 0;
  std::vector<Bdf> vf_bdfs;  // activation with VFs: the list passed to FM

  bool operator==(const PendingIntent&) const = default;
};

struct ActivePartition {
  AllocationId owner;    // empty when adopted or when its owner was released
  bool adopted = false;  // found active in FM without a journaled activation
  Micros since = 0;
  std::vector<Bdf> vf_bdfs;  // activated with these VFs (FABRIC_MODE=2); empty for whole GPUs

  bool operator==(const ActivePartition&) const = default;
};

// A claim whose unprepare is under way (ClaimUnprepareRequested, no ClaimUnprepared yet): its
// allocation has ended, so its partition has no owner; the partition is deactivated unless
// another allocation took it over, then its files are removed.
struct UnpreparingClaim {
  AllocationId allocation_id;
  Claim claim;
  std::vector<Bdf> devices;
  std::optional<PartitionId> partition;

  bool operator==(const UnpreparingClaim&) const = default;
};

// This node's ResourceSlice as last published (ResourceSlicePublished).
struct ResourceSliceState {
  std::string name;
  std::int64_t generation = 0;
  std::uint32_t device_count = 0;
  std::string devices_sha256;

  bool operator==(const ResourceSliceState&) const = default;
};

// An event that made no sense for the state it was applied to. It is kept in the journal (the
// audit trail never loses anything) but changes nothing except this record.
struct Anomaly {
  std::uint64_t seq = 0;
  std::string description;
  bool operator==(const Anomaly&) const = default;
};

// Adding or changing a field: extend snapshot.proto and snapshot_codec.cc, bump
// kSnapshotFormatVersion (snapshot_codec.h) and give the field a change in
// tests/common/state_fields.h (the StateFields tests fail until all three are done). StateDiff
// and `journal state --format json` follow the snapshot message by themselves.
struct State {
  std::uint64_t last_seq = 0;
  Micros last_time = 0;

  // Configuration as journaled by the latest PluginStarted.
  bool fm_enabled = false;
  Micros release_grace = kDefaultReleaseGrace;
  std::string plugin_version;

  // Shared by copies of the state until the inventory or a device's health changes.
  CopyOnWrite<std::map<Bdf, DeviceState>> devices;
  std::vector<std::string> inventory_warnings;

  std::string module_mapping_path;
  // Shared by copies of the state until a new mapping is journaled.
  CopyOnWrite<std::map<Bdf, ModuleId>> module_of_bdf;
  CopyOnWrite<std::map<ModuleId, Bdf>> bdf_of_module;

  bool fm_connected = false;
  bool fm_status_journaled = false;  // a connection event was journaled since PluginStarted
  std::string fm_address;
  // Shared by copies of the state until a new table is journaled (see copy_on_write.h).
  CopyOnWrite<std::map<PartitionId, PartitionState>> partitions;

  std::map<PartitionId, ActivePartition> active;
  std::map<PartitionId, PendingIntent> intents;

  // Only live allocations; finished ones stay in the journal, not in memory.
  std::map<AllocationId, Allocation> allocations;
  std::uint64_t next_allocation_number = 1;
  std::map<std::string, UnpreparingClaim> unpreparing_claims;  // by claim uid
  ResourceSliceState resource_slice;

  std::uint64_t kubelet_restarts = 0;
  std::uint64_t anomaly_count = 0;
  std::vector<Anomaly> recent_anomalies;  // the newest kMaxRecentAnomalies

  static constexpr std::size_t kMaxRecentAnomalies = 16;

  bool operator==(const State&) const = default;
};

// The GPUs (by BDF) that form a partition under the current module mapping; nullopt with a
// reason when a module id has no mapped BDF.
struct PartitionDevices {
  std::vector<Bdf> bdfs;       // FM's physical-id order
  std::string missing_reason;  // non-empty when a module is not mapped
};
PartitionDevices DevicesOfPartition(const State& state, const PartitionState& partition);

// The partition whose GPU set equals the GPUs of `devices` (GpuOf each) exactly, if any; none
// when two devices stand for the same GPU (two VFs of one GPU form no partition).
std::optional<PartitionId> PartitionWithExactDevices(const State& state,
                                                     const std::vector<Bdf>& devices);

// GPUs mapped to a module id that no partition of Fabric Manager's table has (such a GPU can
// never be allocated), with that module id. Empty while the table is not known.
std::map<Bdf, ModuleId> GpusWithModulesUnknownToFabricManager(const State& state);

// Some of `device_ids` are mdev vGPUs: Fabric Manager has no say over them (SPEC §9), so their
// requests are granted and preferred without partitions even with Fabric Manager enabled.
bool AnyMdev(const State& state, const std::vector<std::string>& device_ids);

// The physical GPU behind a kubelet device: the device itself for passthrough, its parent for an
// mdev or a VF. Unknown ids map to themselves.
Bdf GpuOf(const State& state, const std::string& device_id);

// Some of `device_ids` are SR-IOV vGPU VFs (known devices of kind kVgpuVf).
bool AnyVf(const State& state, const std::vector<std::string>& device_ids);

// The VF list Fabric Manager is given to activate a partition whose GPUs are `partition_gpus`
// (FM's order) for `device_ids`: for each GPU, the device of `device_ids` on it. Empty when
// `device_ids` are not VFs, or when a GPU has none of them.
std::vector<Bdf> VfsInGpuOrder(const State& state, const std::vector<Bdf>& partition_gpus,
                               const std::vector<std::string>& device_ids);

// Active partitions sharing at least one GPU with `devices` (GPUs, or VFs and mdevs standing for
// their GPUs).
std::vector<PartitionId> ActivePartitionsOverlapping(const State& state,
                                                     const std::set<Bdf>& devices);

}  // namespace gfp::sm
