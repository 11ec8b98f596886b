#include "statemachine/snapshot_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/text_escape.h"
#include "statemachine/snapshot.pb.h"

namespace gfp::sm {
namespace {

// Encoding: one function per part of the state, in snapshot.proto's order.

void EncodeDevices(const State& s, snapshot::State& out) {
  for (const auto& [bdf, d] : s.devices) {
    auto* o = out.add_devices();
    o->set_bdf(d.bdf);
    o->set_resource(d.resource);
    o->set_device_id(d.device_id);
    o->set_iommu_group(d.iommu_group);
    o->set_numa_node(d.numa_node);
    o->set_healthy(d.healthy);
    o->set_unhealthy_reason(d.unhealthy_reason);
    o->set_kind(static_cast<int>(d.kind));
    o->set_parent_bdf(d.parent_bdf);
  }
  for (const auto& w : s.inventory_warnings) out.add_inventory_warnings(w);
}

void EncodeModules(const State& s, snapshot::State& out) {
  out.set_module_mapping_path(s.module_mapping_path);
  for (const auto& [bdf, module] : s.module_of_bdf) {
    auto* o = out.add_modules();
    o->set_bdf(bdf);
    o->set_module_id(module);
  }
}

void EncodeFabric(const State& s, snapshot::State& out) {
  out.set_fm_connected(s.fm_connected);
  out.set_fm_status_journaled(s.fm_status_journaled);
  out.set_fm_address(s.fm_address);
  for (const auto& [id, p] : s.partitions) {
    auto* o = out.add_partitions();
    o->set_id(p.id);
    for (ModuleId m : p.physical_ids) o->add_physical_ids(m);
    o->set_nvlinks_available(p.nvlinks_available);
    o->set_max_nvlinks(p.max_nvlinks);
    o->set_unsupported(p.unsupported);
  }
  for (const auto& [id, a] : s.active) {
    auto* o = out.add_active();
    o->set_partition_id(id);
    o->set_owner(a.owner);
    o->set_adopted(a.adopted);
    o->set_since(a.since);
    for (const auto& vf : a.vf_bdfs) o->add_vf_bdfs(vf);
  }
  for (const auto& [id, i] : s.intents) {
    auto* o = out.add_intents();
    o->set_partition_id(id);
    o->set_kind(static_cast<int>(i.kind));
    o->set_allocation_id(i.allocation_id);
    o->set_requested_seq(i.requested_seq);
    o->set_requested_at(i.requested_at);
    for (const auto& vf : i.vf_bdfs) o->add_vf_bdfs(vf);
  }
}

void EncodeClaim(const Claim& c, snapshot::Claim& o) {
  o.set_uid(c.uid);
  o.set_namespace_name(c.namespace_name);
  o.set_name(c.name);
  for (const auto& r : c.requests) o.add_requests(r);
  for (const auto& pod : c.reserved_for) o.add_reserved_for(pod);
  o.set_pod_claim_name(c.pod_claim_name);
  o.set_prepared(c.prepared);
}

void EncodeClaims(const State& s, snapshot::State& out) {
  for (const auto& [uid, u] : s.unpreparing_claims) {
    auto* o = out.add_unpreparing_claims();
    o->set_allocation_id(u.allocation_id);
    EncodeClaim(u.claim, *o->mutable_claim());
    for (const auto& d : u.devices) o->add_devices(d);
    o->set_has_partition(u.partition.has_value());
    o->set_partition_id(u.partition.value_or(0));
  }
  auto* slice = out.mutable_resource_slice();
  slice->set_name(s.resource_slice.name);
  slice->set_generation(s.resource_slice.generation);
  slice->set_device_count(s.resource_slice.device_count);
  slice->set_devices_sha256(s.resource_slice.devices_sha256);
}

void EncodeAllocations(const State& s, snapshot::State& out) {
  for (const auto& [id, a] : s.allocations) {
    auto* o = out.add_allocations();
    o->set_id(a.id);
    o->set_resource(a.resource);
    for (const auto& d : a.devices) o->add_devices(d);
    o->set_container_index(a.container_index);
    o->set_status(static_cast<int>(a.status));
    o->set_has_partition(a.partition.has_value());
    o->set_partition_id(a.partition.value_or(0));
    o->set_requested_at(a.requested_at);
    o->set_granted_at(a.granted_at);
    o->set_pod_namespace(a.pod_namespace);
    o->set_pod_name(a.pod_name);
    o->set_container_name(a.container_name);
    for (const auto& vf : a.fabric_vfs) o->add_fabric_vfs(vf);
    if (a.claim) EncodeClaim(*a.claim, *o->mutable_claim());
  }
  out.set_next_allocation_number(s.next_allocation_number);
}

// Deterministic bytes, so equal states give equal snapshots.
std::string SerializeDeterministic(const snapshot::State& out) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  out.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

// Decoding: the same parts; the parts with a checked value return a Status.

void DecodeDevices(const snapshot::State& in, State& s) {
  for (const auto& d : in.devices()) {
    DeviceState device{d.bdf(),       d.resource(), d.device_id(),        d.iommu_group(),
                       d.numa_node(), d.healthy(),  d.unhealthy_reason(), DeviceKindOf(d.kind()),
                       d.parent_bdf()};
    s.devices.mutable_value()[d.bdf()] = std::move(device);
  }
  s.inventory_warnings.assign(in.inventory_warnings().begin(), in.inventory_warnings().end());
}

Status DecodeModules(const snapshot::State& in, State& s) {
  s.module_mapping_path = in.module_mapping_path();
  // The two maps must stay one-to-one (an invariant); a repeated entry would leave them
  // disagreeing, so the snapshot is refused and recovery replays the journal instead.
  for (const auto& m : in.modules()) {
    if (!s.module_of_bdf.mutable_value().emplace(m.bdf(), m.module_id()).second) {
      return DataLoss("snapshot maps GPU " + EscapeAndTruncate(m.bdf(), 64) + " to two module ids");
    }
    if (!s.bdf_of_module.mutable_value().emplace(m.module_id(), m.bdf()).second) {
      return DataLoss("snapshot maps module id " + std::to_string(m.module_id()) + " to two GPUs");
    }
  }
  return Status::Ok();
}

Status DecodeFabric(const snapshot::State& in, State& s) {
  s.fm_connected = in.fm_connected();
  s.fm_status_journaled = in.fm_status_journaled();
  s.fm_address = in.fm_address();
  for (const auto& p : in.partitions()) {
    PartitionState partition;
    partition.id = p.id();
    partition.physical_ids.assign(p.physical_ids().begin(), p.physical_ids().end());
    partition.nvlinks_available = p.nvlinks_available();
    partition.max_nvlinks = p.max_nvlinks();
    partition.unsupported = p.unsupported();
    s.partitions.mutable_value()[p.id()] = std::move(partition);
  }
  for (const auto& a : in.active()) {
    s.active[a.partition_id()] = ActivePartition{
        a.owner(), a.adopted(), a.since(), {a.vf_bdfs().begin(), a.vf_bdfs().end()}};
  }
  for (const auto& i : in.intents()) {
    if (i.kind() != 0 && i.kind() != 1) return DataLoss("snapshot has an unknown intent kind");
    s.intents[i.partition_id()] = PendingIntent{static_cast<IntentKind>(i.kind()),
                                                i.allocation_id(),
                                                i.requested_seq(),
                                                i.requested_at(),
                                                {i.vf_bdfs().begin(), i.vf_bdfs().end()}};
  }
  return Status::Ok();
}

Claim DecodeClaim(const snapshot::Claim& c) {
  return Claim{c.uid(),
               c.namespace_name(),
               c.name(),
               {c.requests().begin(), c.requests().end()},
               {c.reserved_for().begin(), c.reserved_for().end()},
               c.pod_claim_name(),
               c.prepared()};
}

void DecodeClaims(const snapshot::State& in, State& s) {
  for (const auto& u : in.unpreparing_claims()) {
    UnpreparingClaim claim{u.allocation_id(),
                           DecodeClaim(u.claim()),
                           {u.devices().begin(), u.devices().end()},
                           std::nullopt};
    if (u.has_partition()) claim.partition = u.partition_id();
    s.unpreparing_claims[claim.claim.uid] = std::move(claim);
  }
  const auto& slice = in.resource_slice();
  s.resource_slice = {slice.name(), slice.generation(), slice.device_count(),
                      slice.devices_sha256()};
}

Status DecodeAllocations(const snapshot::State& in, State& s) {
  for (const auto& a : in.allocations()) {
    if (a.status() < 0 || a.status() > 4) return DataLoss("snapshot has an unknown status");
    Allocation allocation;
    allocation.id = a.id();
    allocation.resource = a.resource();
    allocation.devices.assign(a.devices().begin(), a.devices().end());
    allocation.container_index = a.container_index();
    allocation.status = static_cast<AllocationStatus>(a.status());
    if (a.has_partition()) allocation.partition = a.partition_id();
    allocation.requested_at = a.requested_at();
    allocation.granted_at = a.granted_at();
    allocation.pod_namespace = a.pod_namespace();
    allocation.pod_name = a.pod_name();
    allocation.container_name = a.container_name();
    allocation.fabric_vfs.assign(a.fabric_vfs().begin(), a.fabric_vfs().end());
    if (a.has_claim()) allocation.claim = DecodeClaim(a.claim());
    s.allocations[a.id()] = std::move(allocation);
  }
  s.next_allocation_number = in.next_allocation_number();
  return Status::Ok();
}

}  // namespace

snapshot::State SnapshotOf(const State& s) {
  snapshot::State out;
  out.set_format_version(kSnapshotFormatVersion);
  out.set_last_seq(s.last_seq);
  out.set_last_time(s.last_time);
  out.set_fm_enabled(s.fm_enabled);
  out.set_release_grace(s.release_grace);
  out.set_plugin_version(s.plugin_version);
  EncodeDevices(s, out);
  EncodeModules(s, out);
  EncodeFabric(s, out);
  EncodeAllocations(s, out);
  EncodeClaims(s, out);
  out.set_kubelet_restarts(s.kubelet_restarts);
  out.set_anomaly_count(s.anomaly_count);
  for (const auto& a : s.recent_anomalies) {
    auto* o = out.add_recent_anomalies();
    o->set_seq(a.seq);
    o->set_description(a.description);
  }
  return out;
}

std::string EncodeSnapshot(const State& s) { return SerializeDeterministic(SnapshotOf(s)); }

Result<State> DecodeSnapshot(const std::string& bytes) {
  snapshot::State in;
  if (!in.ParseFromString(bytes)) return DataLoss("snapshot does not decode as a state");
  if (in.format_version() != kSnapshotFormatVersion) {
    return FailedPrecondition("snapshot format " + std::to_string(in.format_version()) +
                              " is not this binary's format " +
                              std::to_string(kSnapshotFormatVersion));
  }
  State s;
  s.last_seq = in.last_seq();
  s.last_time = in.last_time();
  s.fm_enabled = in.fm_enabled();
  s.release_grace = in.release_grace();
  s.plugin_version = in.plugin_version();
  DecodeDevices(in, s);
  GFP_RETURN_IF_ERROR(DecodeModules(in, s));
  GFP_RETURN_IF_ERROR(DecodeFabric(in, s));
  GFP_RETURN_IF_ERROR(DecodeAllocations(in, s));
  DecodeClaims(in, s);
  s.kubelet_restarts = in.kubelet_restarts();
  s.anomaly_count = in.anomaly_count();
  for (const auto& a : in.recent_anomalies())
    s.recent_anomalies.push_back({a.seq(), a.description()});
  return s;
}

}  // namespace gfp::sm
