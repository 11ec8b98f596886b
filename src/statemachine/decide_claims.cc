#include "statemachine/decide_claims.h"

#include <algorithm>
#include <set>

#include "common/k8s_names.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "statemachine/claims.h"

namespace gfp::sm {
namespace {

using events::ClaimDevice;

std::vector<Bdf> BdfsOf(const std::vector<ClaimDevice>& devices) {
  std::vector<Bdf> out;
  out.reserve(devices.size());
  for (const auto& d : devices) out.push_back(d.bdf());
  return out;
}

std::string NameText(const events::ClaimRef& claim) {
  return "claim " + EscapeAndTruncate(claim.namespace_() + "/" + claim.name(), kMaxRefusedIdBytes);
}

// A "namespace/name" entry of status.reservedFor.
std::string ConsumerProblem(const std::string& consumer) {
  const std::size_t slash = consumer.find('/');
  if (slash == std::string::npos) return "is not namespace/name";
  if (std::string p = DnsLabelProblem(consumer.substr(0, slash)); !p.empty())
    return "namespace " + p;
  return DnsSubdomainProblem(consumer.substr(slash + 1)).empty() ? "" : "pod name is not a name";
}

// The claim's own fields: names fit for paths and the journal, a bounded size.
Refusal ClaimFieldsRefusal(const PrepareClaim& c) {
  const std::string name = NameText(c.claim);
  if (std::string p = UidProblem(c.claim.uid()); !p.empty()) {
    return InvalidRequest(name + ": uid " + p);
  }
  if (std::string p = DnsLabelProblem(c.claim.namespace_()); !p.empty()) {
    return InvalidRequest(name + ": namespace " + p);
  }
  if (std::string p = DnsSubdomainProblem(c.claim.name()); !p.empty()) {
    return InvalidRequest(name + ": name " + p);
  }
  if (!c.pod_claim_name.empty()) {
    if (std::string p = DnsLabelProblem(c.pod_claim_name); !p.empty()) {
      return InvalidRequest(name + ": pod claim name " + p);
    }
  }
  if (c.reserved_for.size() > kMaxClaimConsumers) {
    return InvalidRequest(name + " is reserved for " + std::to_string(c.reserved_for.size()) +
                          " consumers, more than " + std::to_string(kMaxClaimConsumers));
  }
  for (const auto& consumer : c.reserved_for) {
    if (std::string p = ConsumerProblem(consumer); !p.empty()) {
      return InvalidRequest(name + ": reserved for \"" +
                            EscapeAndTruncate(consumer, kMaxRefusedIdBytes) + "\", which " + p);
    }
  }
  return {};
}

// Our driver's devices of the claim: whole GPUs of this node, healthy, each once, each
// answering a request with a valid name.
Refusal ClaimDevicesRefusal(const State& s, const PrepareClaim& c) {
  const std::string name = NameText(c.claim);
  if (c.devices.empty()) return InvalidRequest(name + " has no device of this node");
  if (c.devices.size() > kMaxClaimDevices) {
    return InvalidRequest(name + " names " + std::to_string(c.devices.size()) +
                          " devices, more than " + std::to_string(kMaxClaimDevices));
  }
  std::set<Bdf> seen;
  for (const auto& d : c.devices) {
    const std::string bdf = EscapeAndTruncate(d.bdf(), kMaxRefusedIdBytes);
    if (std::string p = DnsLabelProblem(d.request()); !p.empty()) {
      return InvalidRequest(name + ": request name of GPU " + bdf + " " + p);
    }
    auto device = s.devices.find(d.bdf());
    if (device == s.devices.end()) return InvalidRequest(name + ": unknown GPU " + bdf);
    if (device->second.kind != DeviceKind::kPciPassthrough) {
      return InvalidRequest(name + ": " + bdf + " is a " + DeviceKindName(device->second.kind) +
                            " device; DRA mode serves whole GPUs only");
    }
    if (!seen.insert(d.bdf()).second) return InvalidRequest(name + " names GPU " + bdf + " twice");
    if (!device->second.healthy) {
      return NotServable(name + ": GPU " + bdf +
                         " is unhealthy: " + device->second.unhealthy_reason);
    }
  }
  return {};
}

// One GPU is another live allocation's (a claim's, or a kubelet allocation's in a journal of
// the other mode): it is never taken from it.
Refusal HeldByOtherRefusal(const State& s, const PrepareClaim& c) {
  const std::vector<Bdf> bdfs = BdfsOf(c.devices);
  const std::set<Bdf> wanted(bdfs.begin(), bdfs.end());
  for (const auto& [id, a] : s.allocations) {
    if (!a.live()) continue;
    for (const Bdf& device : a.devices) {
      const Bdf d = GpuOf(s, device);
      if (!wanted.count(d)) continue;
      return NotServable(NameText(c.claim) + ": GPU " + d + " is held by " +
                         (a.claim ? "claim " + ClaimText(*a.claim) : "allocation " + id));
    }
  }
  return {};
}

Refusal NewClaimRefusal(const State& s, const PrepareClaim& c) {
  if (Refusal r = ClaimFieldsRefusal(c); !r.text.empty()) return r;
  if (Refusal r = ClaimDevicesRefusal(s, c); !r.text.empty()) return r;
  if (s.fm_enabled) {
    if (Refusal r = FabricManagerRefusal(s, BdfsOf(c.devices)); !r.text.empty()) {
      r.text = NameText(c.claim) + ": " + r.text;
      return r;
    }
  }
  return HeldByOtherRefusal(s, c);
}

// The request as journaled: every field when it is accepted (then all are valid and bounded);
// when refused, the first few devices and no consumers, escaped and cut.
events::ClaimPrepareRequested RequestedEvent(const State& s, const AllocationId& id,
                                             const PrepareClaim& c, bool refused) {
  events::ClaimPrepareRequested e;
  e.set_allocation_id(id);
  auto* claim = e.mutable_claim();
  claim->set_uid(refused ? EscapeAndTruncate(c.claim.uid(), kMaxRefusedIdBytes) : c.claim.uid());
  claim->set_namespace_(refused ? EscapeAndTruncate(c.claim.namespace_(), kMaxRefusedIdBytes)
                                : c.claim.namespace_());
  claim->set_name(refused ? EscapeAndTruncate(c.claim.name(), kMaxRefusedIdBytes) : c.claim.name());
  const std::size_t kept =
      refused ? std::min(c.devices.size(), kMaxRefusedIdsKept) : c.devices.size();
  for (std::size_t i = 0; i < kept; ++i) {
    auto* d = e.add_devices();
    d->set_request(refused ? EscapeAndTruncate(c.devices[i].request(), kMaxRefusedIdBytes)
                           : c.devices[i].request());
    d->set_bdf(refused ? EscapeAndTruncate(c.devices[i].bdf(), kMaxRefusedIdBytes)
                       : c.devices[i].bdf());
  }
  e.set_devices_omitted(static_cast<std::uint32_t>(c.devices.size() - kept));
  if (refused) return e;
  for (const auto& consumer : c.reserved_for) e.add_reserved_for(consumer);
  e.set_pod_claim_name(c.pod_claim_name);
  if (s.fm_enabled) {
    if (auto pid = PartitionWithExactDevices(s, BdfsOf(c.devices))) {
      e.set_has_partition(true);
      e.set_partition_id(*pid);
    }
  }
  return e;
}

// A prepared claim whose partition is not active and its own: re-activated for it (never a
// second activation while it is active).
void ReactivateForClaim(Builder& b, const Allocation& a) {
  const State& s = b.state();
  const PartitionId pid = *a.partition;
  if (auto pending = s.intents.find(pid); pending != s.intents.end()) {
    b.Refuse(NotServable(PendingText(pending->second, pid)));
    return;
  }
  if (s.active.count(pid)) {
    b.Refuse(NotServable("partition " + std::to_string(pid) + " of claim " + ClaimText(*a.claim) +
                         " is active without an owner; try again"));
    return;
  }
  const std::set<Bdf> gpus(a.devices.begin(), a.devices.end());
  if (auto overlapping = ActivePartitionsOverlapping(s, gpus); !overlapping.empty()) {
    b.Refuse(NotServable("partition " + std::to_string(pid) + " of claim " + ClaimText(*a.claim) +
                         " cannot be re-activated: its GPUs are in " + "active partition " +
                         std::to_string(overlapping.front())));
    return;
  }
  RequestActivation(b, pid, a.id, "re-activation for claim " + ClaimText(*a.claim), {});
}

// Prepare of a claim this node already holds: the same devices get the same answer, after the
// partition and files it stands on are checked and, journal first, repaired.
void RepeatPrepare(Builder& b, const Allocation& a, const PrepareClaim& c) {
  b.SetAllocation(a.id);
  const std::string claim = "claim " + ClaimText(*a.claim);
  const std::vector<Bdf> wanted = BdfsOf(c.devices);
  if (wanted != a.devices) {
    b.Refuse(InvalidRequest(claim + " is prepared with GPUs " + Join(a.devices) + ", not " +
                            EscapeAndTruncate(Join(wanted), kMaxReasonBytes)));
    return;
  }
  if (a.status == AllocationStatus::kRequested) {
    b.Refuse(NotServable(claim + " is being prepared (" + a.id + "); try again"));
    return;
  }
  const State& s = b.state();
  bool partition_lost = false;
  if (a.partition) {
    auto active = s.active.find(*a.partition);
    partition_lost = active == s.active.end() || active->second.owner != a.id;
  }
  const bool files_lost = a.claim->prepared && !c.files_present;
  if (!partition_lost && !files_lost) return;  // prepared, or its files are next
  if (!a.claim->prepared) {
    // Its repair (or its first prepare) is journaled already and not finished: go on with it.
    ReactivateForClaim(b, a);
    return;
  }
  // The repair names the claim as journaled when it was prepared, not as this call spells it.
  events::ClaimPrepareRequested repair;
  repair.set_allocation_id(a.id);
  repair.mutable_claim()->set_uid(a.claim->uid);
  repair.mutable_claim()->set_namespace_(a.claim->namespace_name);
  repair.mutable_claim()->set_name(a.claim->name);
  for (std::size_t i = 0; i < a.devices.size(); ++i) {
    auto* device = repair.add_devices();
    device->set_request(a.claim->requests[i]);
    device->set_bdf(a.devices[i]);
  }
  if (a.partition) {
    repair.set_has_partition(true);
    repair.set_partition_id(*a.partition);
  }
  repair.set_repair(true);
  repair.set_repair_reason(partition_lost ? "partition " + std::to_string(*a.partition) +
                                                " is not active for it"
                                          : "its CDI or metadata files are missing");
  GFP_EMIT(b, claim_prepare_requested, repair);
  if (partition_lost) ReactivateForClaim(b, b.state().allocations.at(a.id));
}

}  // namespace

void DecidePrepareClaim(Builder& b, const PrepareClaim& c) {
  const State& s = b.state();
  if (const Allocation* a = ClaimAllocation(s, c.claim.uid())) {
    RepeatPrepare(b, *a, c);
    return;
  }
  if (s.unpreparing_claims.count(c.claim.uid())) {
    b.Refuse(NotServable(NameText(c.claim) + " (uid " + c.claim.uid() +
                         ") is being unprepared; try again"));
    return;
  }
  const AllocationId id = AllocationIdFor(s.next_allocation_number);
  b.SetAllocation(id);
  const Refusal refusal = NewClaimRefusal(s, c);
  GFP_EMIT(b, claim_prepare_requested, RequestedEvent(s, id, c, !refusal.text.empty()));
  if (!refusal.text.empty()) {
    RejectAllocation(b, id, refusal.kind, refusal.text);
    return;
  }
  if (!b.state().fm_enabled) {
    Grant(b, id, std::nullopt);
    return;
  }
  ContinueAllocation(b, id);
}

void DecideRecordClaimFiles(Builder& b, const RecordClaimFiles& c) {
  const ClaimProgress progress = ClaimProgressOf(b.state(), c.claim_uid);
  const Allocation* a = ClaimAllocation(b.state(), c.claim_uid);
  if (progress != ClaimProgress::kWriteFiles || !a) {
    b.Refuse(NotServable("claim uid " + EscapeAndTruncate(c.claim_uid, kMaxRefusedIdBytes) +
                         " has no files to record: it is " + ClaimProgressName(progress)));
    return;
  }
  b.SetAllocation(a->id);
  events::ClaimPrepared prepared;
  prepared.set_allocation_id(a->id);
  prepared.set_claim_uid(c.claim_uid);
  GFP_EMIT(b, claim_prepared, prepared);
}

void DecideUnprepareClaim(Builder& b, const UnprepareClaim& c) {
  if (const Allocation* a = ClaimAllocation(b.state(), c.claim_uid)) {
    b.SetAllocation(a->id);
    if (a->status == AllocationStatus::kRequested) {
      b.Refuse(NotServable("claim " + ClaimText(*a->claim) + " is being prepared (" + a->id +
                           "); try again"));
      return;
    }
    events::ClaimUnprepareRequested requested;
    requested.set_allocation_id(a->id);
    requested.set_claim_uid(c.claim_uid);
    requested.set_reason(c.reason);
    requested.set_detail(EscapeAndTruncate(c.detail, kMaxReasonBytes));
    GFP_EMIT(b, claim_unprepare_requested, requested);
  }
  auto it = b.state().unpreparing_claims.find(c.claim_uid);
  if (it == b.state().unpreparing_claims.end()) return;  // unknown or done: nothing to do
  const UnpreparingClaim& u = it->second;
  b.SetAllocation(u.allocation_id);
  if (ClaimProgressOf(b.state(), c.claim_uid) != ClaimProgress::kDeactivating) return;
  const PartitionId pid = *u.partition;
  if (auto pending = b.state().intents.find(pid); pending != b.state().intents.end()) {
    b.Refuse(NotServable(PendingText(pending->second, pid)));
    return;
  }
  RequestDeactivation(b, pid, "claim " + ClaimText(u.claim) + " unprepared", "");
}

void DecideClaimFilesRemoved(Builder& b, const RecordClaimFilesRemoved& c) {
  const ClaimProgress progress = ClaimProgressOf(b.state(), c.claim_uid);
  if (progress == ClaimProgress::kUnknown) return;
  if (progress != ClaimProgress::kRemoveFiles) {
    b.Refuse(NotServable("claim uid " + EscapeAndTruncate(c.claim_uid, kMaxRefusedIdBytes) +
                         " is " + ClaimProgressName(progress) +
                         ", not waiting for its files' removal"));
    return;
  }
  const UnpreparingClaim& u = b.state().unpreparing_claims.at(c.claim_uid);
  b.SetAllocation(u.allocation_id);
  events::ClaimUnprepared done;
  done.set_allocation_id(u.allocation_id);
  done.set_claim_uid(c.claim_uid);
  GFP_EMIT(b, claim_unprepared, done);
}

void DecideSlicePublished(Builder& b, const RecordResourceSlicePublished& c) {
  if (c.slice == b.state().resource_slice) return;
  events::ResourceSlicePublished e;
  e.set_slice_name(c.slice.name);
  e.set_generation(c.slice.generation);
  e.set_device_count(c.slice.device_count);
  e.set_devices_sha256(c.slice.devices_sha256);
  GFP_EMIT(b, resource_slice_published, e);
}

Refusal ClaimHoldsRefusal(const State& s, const std::vector<std::string>& devices) {
  std::set<Bdf> gpus;
  for (const auto& device : devices) gpus.insert(GpuOf(s, device));
  for (const auto& [id, a] : s.allocations) {
    if (!a.claim) continue;
    for (const Bdf& d : a.devices) {
      if (gpus.count(d)) {
        return NotServable("GPU " + d + " is prepared for DRA claim " + ClaimText(*a.claim));
      }
    }
  }
  return {};
}

}  // namespace gfp::sm
