// Every field of sm::State and of the structs it holds, each with a change that makes it differ,
// for tests that must see every field: the snapshot codec (a field added to State and forgotten
// in snapshot.proto), operator==, StateDiff and `journal state --format json`.
//
// FieldCount<T>() counts T's fields from the type itself; StateFields.EveryFieldHasAChange fails
// when a struct has more fields than changes here, naming the struct.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "statemachine/state.h"

namespace gfp::testing {

namespace field_count_detail {
// Converts to any type, so `T{AnyField{}, ...}` compiles for as many initializers as T has fields.
struct AnyField {
  template <typename T>
  operator T() const;  // NOLINT: implicit on purpose; declared only (unevaluated)
};
}  // namespace field_count_detail

// The number of fields of the aggregate T.
template <typename T, typename... Fields>
constexpr std::size_t FieldCount() {
  using field_count_detail::AnyField;
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return FieldCount<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

struct FieldChange {
  std::string field;  // "<struct>.<field>" of state.h
  std::function<void(sm::State&)> change;
  // False only for bdf_of_module: module_of_bdf's inverse, rebuilt from it when decoding.
  bool in_snapshot = true;
};

namespace field_change_detail {

// The first entry of `map` (a new one with `key` when empty), for changing one field of it.
template <typename Map>
auto& FirstOf(Map& map, const typename Map::key_type& key) {
  if (map.empty()) map[key];
  return map.begin()->second;
}

inline sm::DeviceState& Device(sm::State& s) {
  auto& devices = s.devices.mutable_value();
  auto& d = FirstOf(devices, "0000:ff:00.0");
  if (d.bdf.empty()) d.bdf = devices.begin()->first;
  return d;
}
inline sm::PartitionState& Partition(sm::State& s) {
  auto& partitions = s.partitions.mutable_value();
  auto& p = FirstOf(partitions, 99);
  p.id = partitions.begin()->first;
  return p;
}
inline sm::Allocation& Allocation(sm::State& s) {
  auto& a = FirstOf(s.allocations, "alloc-99");
  if (a.id.empty()) a.id = s.allocations.begin()->first;
  return a;
}
inline sm::Claim& ClaimOf(sm::State& s) {
  auto& a = Allocation(s);
  if (!a.claim) a.claim.emplace();
  return *a.claim;
}
inline sm::UnpreparingClaim& Unpreparing(sm::State& s) {
  auto& u = FirstOf(s.unpreparing_claims, "uid-99");
  if (u.claim.uid.empty()) u.claim.uid = s.unpreparing_claims.begin()->first;
  return u;
}
inline sm::PendingIntent& Intent(sm::State& s) { return FirstOf(s.intents, 98); }
inline sm::ActivePartition& Active(sm::State& s) { return FirstOf(s.active, 97); }
inline sm::Anomaly& Anomaly(sm::State& s) {
  if (s.recent_anomalies.empty()) s.recent_anomalies.push_back({});
  return s.recent_anomalies.front();
}

// Moves the first entry of `map` to a new key (its id field, which must equal the key, too).
template <typename Map, typename SetId>
void Rekey(Map& map, typename Map::key_type key, SetId set_id) {
  auto entry = map.begin()->second;
  map.erase(map.begin());
  set_id(entry, key);
  map[key] = entry;
}

}  // namespace field_change_detail

// One change per field; each keeps the state decodable (enums stay in range, keys stay equal to
// the ids they duplicate). Works on any state: an entry is added where a map is empty.
inline std::vector<FieldChange> FieldChanges() {
  using namespace field_change_detail;  // NOLINT: the accessors above, in this list only
  using sm::State;
  return {
      {"State.last_seq", [](State& s) { s.last_seq += 1; }},
      {"State.last_time", [](State& s) { s.last_time += 1; }},
      {"State.fm_enabled", [](State& s) { s.fm_enabled = !s.fm_enabled; }},
      {"State.release_grace", [](State& s) { s.release_grace += 1; }},
      {"State.plugin_version", [](State& s) { s.plugin_version += "+"; }},
      {"State.devices",
       [](State& s) { s.devices.mutable_value()["0000:fe:00.0"].bdf = "0000:fe:00.0"; }},
      {"State.inventory_warnings", [](State& s) { s.inventory_warnings.push_back("w"); }},
      {"State.module_mapping_path", [](State& s) { s.module_mapping_path += "+"; }},
      {"State.module_of_bdf",  // one fact kept in two maps: change both
       [](State& s) {
         s.module_of_bdf.mutable_value()["0000:fd:00.0"] = 77;
         s.bdf_of_module.mutable_value()[77] = "0000:fd:00.0";
       }},
      {"State.bdf_of_module", [](State& s) { s.bdf_of_module.mutable_value()[78] = "x"; }, false},
      {"State.fm_connected", [](State& s) { s.fm_connected = !s.fm_connected; }},
      {"State.fm_status_journaled",
       [](State& s) { s.fm_status_journaled = !s.fm_status_journaled; }},
      {"State.fm_address", [](State& s) { s.fm_address += "+"; }},
      {"State.partitions", [](State& s) { s.partitions.mutable_value()[96].id = 96; }},
      {"State.active", [](State& s) { s.active[95]; }},
      {"State.intents", [](State& s) { s.intents[94]; }},
      // Keys no life makes: a life of 93 sagas has its own "alloc-93", and adding that again
      // changed nothing (found by seed 17749998962200150423).
      {"State.allocations",
       [](State& s) { s.allocations["alloc-added-here"].id = "alloc-added-here"; }},
      {"State.next_allocation_number", [](State& s) { s.next_allocation_number += 1; }},
      {"State.unpreparing_claims",
       [](State& s) { s.unpreparing_claims["uid-added-here"].claim.uid = "uid-added-here"; }},
      {"State.resource_slice", [](State& s) { s.resource_slice.name += "+"; }},
      {"State.kubelet_restarts", [](State& s) { s.kubelet_restarts += 1; }},
      {"State.anomaly_count", [](State& s) { s.anomaly_count += 1; }},
      {"State.recent_anomalies",
       [](State& s) {
         s.recent_anomalies.push_back({1, "a"});
       }},

      {"DeviceState.bdf",
       [](State& s) {
         Device(s);
         Rekey(s.devices.mutable_value(), s.devices.begin()->first + "+",
               [](sm::DeviceState& d, const sm::Bdf& key) { d.bdf = key; });
       }},
      {"DeviceState.resource", [](State& s) { Device(s).resource += "+"; }},
      {"DeviceState.device_id", [](State& s) { Device(s).device_id += "+"; }},
      {"DeviceState.iommu_group", [](State& s) { Device(s).iommu_group += "+"; }},
      {"DeviceState.numa_node", [](State& s) { Device(s).numa_node += 1; }},
      {"DeviceState.healthy", [](State& s) { Device(s).healthy = !Device(s).healthy; }},
      {"DeviceState.unhealthy_reason", [](State& s) { Device(s).unhealthy_reason += "+"; }},
      {"DeviceState.kind",
       [](State& s) {
         auto& d = Device(s);
         d.kind = static_cast<sm::DeviceKind>((static_cast<int>(d.kind) + 1) % 3);
       }},
      {"DeviceState.parent_bdf", [](State& s) { Device(s).parent_bdf += "+"; }},

      {"PartitionState.id",
       [](State& s) {
         Partition(s);
         Rekey(s.partitions.mutable_value(), s.partitions.begin()->first + 1000,
               [](sm::PartitionState& p, sm::PartitionId key) { p.id = key; });
       }},
      {"PartitionState.physical_ids", [](State& s) { Partition(s).physical_ids.push_back(9); }},
      {"PartitionState.nvlinks_available", [](State& s) { Partition(s).nvlinks_available += 1; }},
      {"PartitionState.max_nvlinks", [](State& s) { Partition(s).max_nvlinks += 1; }},
      {"PartitionState.unsupported",
       [](State& s) { Partition(s).unsupported = !Partition(s).unsupported; }},

      {"Allocation.id",
       [](State& s) {
         Allocation(s);
         Rekey(s.allocations, s.allocations.begin()->first + "+",
               [](sm::Allocation& a, const sm::AllocationId& key) { a.id = key; });
       }},
      {"Allocation.resource", [](State& s) { Allocation(s).resource += "+"; }},
      {"Allocation.devices", [](State& s) { Allocation(s).devices.push_back("d"); }},
      {"Allocation.container_index", [](State& s) { Allocation(s).container_index += 1; }},
      {"Allocation.status",
       [](State& s) {
         auto& a = Allocation(s);
         a.status = static_cast<sm::AllocationStatus>((static_cast<int>(a.status) + 1) % 5);
       }},
      {"Allocation.partition",
       [](State& s) {
         auto& a = Allocation(s);
         a.partition = a.partition ? *a.partition + 1 : 0;
       }},
      {"Allocation.requested_at", [](State& s) { Allocation(s).requested_at += 1; }},
      {"Allocation.granted_at", [](State& s) { Allocation(s).granted_at += 1; }},
      {"Allocation.pod_namespace", [](State& s) { Allocation(s).pod_namespace += "+"; }},
      {"Allocation.pod_name", [](State& s) { Allocation(s).pod_name += "+"; }},
      {"Allocation.container_name", [](State& s) { Allocation(s).container_name += "+"; }},
      {"Allocation.fabric_vfs", [](State& s) { Allocation(s).fabric_vfs.push_back("vf"); }},
      {"Allocation.claim",
       [](State& s) {
         auto& a = Allocation(s);
         if (a.claim) {
           a.claim.reset();
         } else {
           a.claim.emplace();
         }
       }},

      {"Claim.uid", [](State& s) { ClaimOf(s).uid += "+"; }},
      {"Claim.namespace_name", [](State& s) { ClaimOf(s).namespace_name += "+"; }},
      {"Claim.name", [](State& s) { ClaimOf(s).name += "+"; }},
      {"Claim.requests", [](State& s) { ClaimOf(s).requests.push_back("gpu9"); }},
      {"Claim.reserved_for", [](State& s) { ClaimOf(s).reserved_for.push_back("ns/pod"); }},
      {"Claim.pod_claim_name", [](State& s) { ClaimOf(s).pod_claim_name += "+"; }},
      {"Claim.prepared", [](State& s) { ClaimOf(s).prepared = !ClaimOf(s).prepared; }},

      {"UnpreparingClaim.allocation_id", [](State& s) { Unpreparing(s).allocation_id += "+"; }},
      {"UnpreparingClaim.claim", [](State& s) { Unpreparing(s).claim.name += "+"; }},
      {"UnpreparingClaim.devices", [](State& s) { Unpreparing(s).devices.push_back("d"); }},
      {"UnpreparingClaim.partition",
       [](State& s) {
         auto& u = Unpreparing(s);
         u.partition = u.partition ? *u.partition + 1 : 0;
       }},

      {"ResourceSliceState.name", [](State& s) { s.resource_slice.name += "+"; }},
      {"ResourceSliceState.generation", [](State& s) { s.resource_slice.generation += 1; }},
      {"ResourceSliceState.device_count", [](State& s) { s.resource_slice.device_count += 1; }},
      {"ResourceSliceState.devices_sha256",
       [](State& s) { s.resource_slice.devices_sha256 += "+"; }},

      {"PendingIntent.kind",
       [](State& s) {
         auto& i = Intent(s);
         i.kind = i.kind == sm::IntentKind::kActivate ? sm::IntentKind::kDeactivate
                                                      : sm::IntentKind::kActivate;
       }},
      {"PendingIntent.allocation_id", [](State& s) { Intent(s).allocation_id += "+"; }},
      {"PendingIntent.requested_seq", [](State& s) { Intent(s).requested_seq += 1; }},
      {"PendingIntent.requested_at", [](State& s) { Intent(s).requested_at += 1; }},
      {"PendingIntent.vf_bdfs", [](State& s) { Intent(s).vf_bdfs.push_back("vf"); }},

      {"ActivePartition.owner", [](State& s) { Active(s).owner += "+"; }},
      {"ActivePartition.adopted", [](State& s) { Active(s).adopted = !Active(s).adopted; }},
      {"ActivePartition.since", [](State& s) { Active(s).since += 1; }},
      {"ActivePartition.vf_bdfs", [](State& s) { Active(s).vf_bdfs.push_back("vf"); }},

      {"Anomaly.seq", [](State& s) { Anomaly(s).seq += 1; }},
      {"Anomaly.description", [](State& s) { Anomaly(s).description += "+"; }},
  };
}

// A state with one entry of everything and no field at its default, to change fields of.
inline sm::State StateWithEveryPart() {
  sm::State s;
  s.last_seq = 12;
  s.last_time = 1'700'000'000'000'000;
  s.fm_enabled = true;
  s.plugin_version = "1.0";
  s.devices.mutable_value()["0000:1b:00.4"] = {
      "0000:1b:00.4", "nvidia.com/V",          "2330",        "42", 1, false,
      "gone",         sm::DeviceKind::kVgpuVf, "0000:1b:00.0"};
  s.inventory_warnings = {"a warning"};
  s.module_mapping_path = "/etc/map.yaml";
  s.module_of_bdf.mutable_value()["0000:1b:00.0"] = 1;
  s.bdf_of_module.mutable_value()[1] = "0000:1b:00.0";
  s.fm_connected = true;
  s.fm_status_journaled = true;
  s.fm_address = "/run/fm.sock";
  s.partitions.mutable_value()[3] = {3, {1}, 18, 18, false};
  s.active[3] = {"alloc-1", false, s.last_time, {"0000:1b:00.4"}};
  s.intents[4] = {sm::IntentKind::kDeactivate, "alloc-1", 11, s.last_time, {"0000:1b:00.4"}};
  s.allocations["alloc-1"] = {
      "alloc-1", "nvidia.com/V",   {"0000:1b:00.4"}, 1,     sm::AllocationStatus::kBound,
      3,         s.last_time - 5,  s.last_time - 4,  "vms", "virt-launcher-a",
      "compute", {"0000:1b:00.4"}, std::nullopt};
  s.allocations["alloc-2"] = {
      "alloc-2",
      "nvidia.com/A",
      {"0000:2b:00.0"},
      0,
      sm::AllocationStatus::kGranted,
      5,
      s.last_time - 3,
      s.last_time - 2,
      "",
      "",
      "",
      {},
      sm::Claim{"uid-2", "vms", "vm-b-gpus", {"gpu0"}, {"vms/vm-b"}, "gpus", true}};
  s.unpreparing_claims["uid-3"] = {
      "alloc-3", sm::Claim{"uid-3", "vms", "vm-c", {"gpu0"}, {}, "", true}, {"0000:3b:00.0"}, 6};
  s.resource_slice = {"node-a-gpu-fabric-plugin.io-abcde", 2, 8, "ab12"};
  s.next_allocation_number = 4;
  s.kubelet_restarts = 1;
  s.anomaly_count = 1;
  s.recent_anomalies = {{7, "an anomaly"}};
  return s;
}

}  // namespace gfp::testing
