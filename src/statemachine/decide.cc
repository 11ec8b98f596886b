#include "statemachine/decide.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "common/strings.h"
#include "common/text_escape.h"
#include "fm_codes/fm_codes.h"
#include "statemachine/apply.h"
#include "statemachine/claims.h"
#include "statemachine/decide_claims.h"
#include "statemachine/decide_steps.h"
#include "statemachine/recovery.h"

namespace gfp::sm {

using events::Event;

constexpr const char* kInterrupted =
    "interrupted: the plugin stopped before this request completed (kubelet retries it)";

std::string InterruptedText(const std::string& cause) {
  if (cause.empty()) return kInterrupted;
  return "interrupted: " + cause + "; the request did not complete (kubelet retries it)";
}

std::string FmText(const events::FmResult& fm) {
  return fm.name().empty() ? "FM code " + std::to_string(fm.code()) : fm.name();
}

bool FmAnswered(const events::FmResult& fm, int code) {
  return !RecoveredNotApplied(fm) && fm.code() == code;
}

RefusalKind FmRefusalKind(const events::FmResult& fm) {
  return RecoveredNotApplied(fm) ? RefusalKind::kInterrupted : RefusalKind::kFabricManagerRefused;
}
Refusal FmRefusal(const events::FmResult& fm, std::string text) {
  return {FmRefusalKind(fm), std::move(text)};
}

void RejectAllocation(Builder& b, const AllocationId& id, RefusalKind kind,
                      const std::string& reason, const events::FmResult* fm,
                      const std::string& journal_note) {
  const std::string safe = EscapeAndTruncate(reason, kMaxReasonBytes);
  b.Refuse({kind, safe}, fm ? fm->code() : 0);
  auto allocation = b.state().allocations.find(id);
  if (allocation != b.state().allocations.end() && allocation->second.claim) {
    events::ClaimPrepareFailed failed;
    failed.set_allocation_id(id);
    failed.set_claim_uid(allocation->second.claim->uid);
    failed.set_reason(safe + journal_note);
    if (fm) *failed.mutable_fm() = *fm;
    GFP_EMIT(b, claim_prepare_failed, failed);
    return;
  }
  events::AllocationRejected rejected;
  rejected.set_allocation_id(id);
  rejected.set_reason(safe + journal_note);
  if (fm) *rejected.mutable_fm() = *fm;
  GFP_EMIT(b, allocation_rejected, rejected);
}

void Grant(Builder& b, const AllocationId& id, std::optional<PartitionId> partition) {
  events::AllocationGranted granted;
  granted.set_allocation_id(id);
  if (partition) {
    granted.set_has_partition(true);
    granted.set_partition_id(*partition);
  }
  GFP_EMIT(b, allocation_granted, granted);
}

void RequestDeactivation(Builder& b, PartitionId pid, const std::string& reason,
                         const AllocationId& for_allocation) {
  events::PartitionDeactivationRequested requested;
  requested.set_partition_id(pid);
  requested.set_reason(reason);
  requested.set_for_allocation_id(for_allocation);
  GFP_EMIT(b, partition_deactivation_requested, requested);
  b.Effect({Effect::Kind::kDeactivatePartition, pid, {}, {}});
}

void RequestActivation(Builder& b, PartitionId pid, const AllocationId& for_allocation,
                       const std::string& reason, const std::vector<Bdf>& vfs) {
  events::PartitionActivationRequested requested;
  requested.set_partition_id(pid);
  requested.set_allocation_id(for_allocation);
  requested.set_reason(reason);
  for (const Bdf& vf : vfs) requested.add_vf_bdfs(vf);
  GFP_EMIT(b, partition_activation_requested, requested);
  b.Effect({Effect::Kind::kActivatePartition, pid, {}, vfs});
}

std::string PendingText(const PendingIntent& intent, PartitionId pid) {
  return "partition " + std::to_string(pid) + " has a pending " + IntentKindName(intent.kind) +
         " (journal seq " + std::to_string(intent.requested_seq) + "); try again";
}

static std::string VfListText(const std::vector<Bdf>& vfs) {
  return vfs.empty() ? "whole GPUs" : "VFs [" + Join(vfs) + "]";
}

// An active partition that belongs to a live allocation this request does not supersede (another
// VM holds other VFs of its GPUs): it is never taken away from it.
static std::string ActiveForOtherText(PartitionId pid, const ActivePartition& active) {
  return "partition " + std::to_string(pid) + " is active for allocation " + active.owner +
         " with " + VfListText(active.vf_bdfs);
}

// The VF list to activate `pid` with for `a`: the list of its first activation when it has one
// (FM needs the identical order on every activation), else one VF per GPU of the partition in
// FM's order. Empty for whole GPUs.
std::vector<Bdf> VfListFor(const State& s, const Allocation& a, PartitionId pid) {
  if (!a.fabric_vfs.empty()) return a.fabric_vfs;
  auto partition = s.partitions.find(pid);
  if (partition == s.partitions.end()) return {};
  return VfsInGpuOrder(s, DevicesOfPartition(s, partition->second).bdfs, a.devices);
}

// Why `a`'s journaled VF list cannot re-activate `pid`: a known VF of it is no longer on the GPU
// in the same place of the partition's GPU order. FM requires the same order on every activation,
// so a different list is never passed; the re-activation is refused instead.
std::string VfOrderProblem(const State& s, const Allocation& a, PartitionId pid) {
  if (a.fabric_vfs.empty()) {
    // Never activated with VFs (no journal of this version holds such a grant): its VFs must
    // still give one per GPU, else it would be activated for whole GPUs.
    if (!AnyVf(s, a.devices) || !VfListFor(s, a, pid).empty()) return "";
    return "partition " + std::to_string(pid) + " cannot be re-activated for allocation " + a.id +
           ": its VFs " + Join(a.devices) + " are not one per GPU of the partition";
  }
  auto partition = s.partitions.find(pid);
  if (partition == s.partitions.end()) return "";
  const PartitionDevices gpus = DevicesOfPartition(s, partition->second);
  bool same = gpus.bdfs.size() == a.fabric_vfs.size();
  for (std::size_t i = 0; same && i < gpus.bdfs.size(); ++i) {
    auto vf = s.devices.find(a.fabric_vfs[i]);
    if (vf != s.devices.end() && GpuOf(s, vf->first) != gpus.bdfs[i]) same = false;
  }
  if (same) return "";
  return "partition " + std::to_string(pid) + " cannot be re-activated for allocation " + a.id +
         " with its VFs [" + Join(a.fabric_vfs) +
         "]: they no longer follow the partition's GPU order [" +
         (gpus.bdfs.empty() ? gpus.missing_reason : Join(gpus.bdfs)) +
         "], and Fabric Manager needs the same VF order on every activation";
}

// The next step of a Fabric-Manager allocation still in `requested`: clear every other active
// partition overlapping its GPUs (one deactivation per step), then activate its own partition.
void ContinueAllocation(Builder& b, const AllocationId& id) {
  const State& s = b.state();
  auto it = s.allocations.find(id);
  if (it == s.allocations.end() || it->second.status != AllocationStatus::kRequested) return;
  const Allocation& a = it->second;
  auto target = PartitionWithExactDevices(s, a.devices);
  const std::vector<Bdf> vfs = target ? VfListFor(s, a, *target) : std::vector<Bdf>{};
  if (!target || (vfs.empty() && AnyVf(s, a.devices))) {
    RejectAllocation(
        b, id, RefusalKind::kNotServable,
        "devices " + Join(a.devices) + " no longer form one partition of the Fabric Manager table");
    return;
  }
  std::set<Bdf> devices(a.devices.begin(), a.devices.end());
  for (PartitionId stale : ActivePartitionsOverlapping(s, devices)) {
    if (stale == *target) continue;
    if (auto pending = s.intents.find(stale); pending != s.intents.end()) {
      RejectAllocation(b, id, RefusalKind::kNotServable, PendingText(pending->second, stale));
      return;
    }
    // Owners this request supersedes are already released; one still here holds other devices.
    if (!s.active.at(stale).owner.empty()) {
      RejectAllocation(b, id, RefusalKind::kNotServable,
                       ActiveForOtherText(stale, s.active.at(stale)));
      return;
    }
    RequestDeactivation(b, stale, "stale: its GPUs were allocated again by kubelet (" + id + ")",
                        id);
    return;
  }
  auto active = s.active.find(*target);
  if (active != s.active.end() && active->second.vf_bdfs == vfs) {
    // Already active with exactly this activation (idempotent re-request, or an adopted or
    // orphaned partition of whole GPUs): no FM call.
    Grant(b, id, *target);
    return;
  }
  if (auto pending = s.intents.find(*target); pending != s.intents.end()) {
    RejectAllocation(b, id, RefusalKind::kNotServable, PendingText(pending->second, *target));
    return;
  }
  if (active != s.active.end()) {
    if (!active->second.owner.empty()) {
      RejectAllocation(b, id, RefusalKind::kNotServable,
                       ActiveForOtherText(*target, active->second));
      return;
    }
    // Active with other VFs (or none) and no live owner: activate it again with this list.
    RequestDeactivation(b, *target,
                        "stale: active with " + VfListText(active->second.vf_bdfs) +
                            ", allocation " + id + " needs " + VfListText(vfs),
                        id);
    return;
  }
  RequestActivation(b, *target, id, "allocation " + id, vfs);
}

// "GPU G" for a whole GPU, "GPU G of VF V" for a VF.
static std::string GpuText(const State& s, const std::string& device) {
  const Bdf gpu = GpuOf(s, device);
  return gpu == device ? "GPU " + gpu : "GPU " + gpu + " of VF " + device;
}

// VFs with Fabric Manager: each on a known GPU, one VF per GPU (FM answers FM_ST_BADPARAM to two
// VFs of one GPU).
static Refusal VfRefusal(const State& s, const std::vector<std::string>& devices) {
  std::map<Bdf, std::string> vf_on_gpu;
  for (const auto& device : devices) {
    auto known = s.devices.find(device);
    if (known == s.devices.end() || known->second.kind != DeviceKind::kVgpuVf) continue;
    if (known->second.parent_bdf.empty()) {
      return NotServable("VF " + device + " has no parent GPU in the inventory");
    }
    auto [other, fresh] = vf_on_gpu.emplace(known->second.parent_bdf, device);
    if (!fresh) {
      return NotServable("VFs " + other->second + " and " + device + " are on the same GPU " +
                         other->first + "; Fabric Manager takes one VF per GPU");
    }
  }
  return {};
}

Refusal FabricManagerRefusal(const State& s, const std::vector<std::string>& devices) {
  if (!s.fm_connected) {
    return {RefusalKind::kFabricManagerUnusable,
            "Fabric Manager is not connected; refusing to allocate without it"};
  }
  if (s.partitions.empty()) {
    return {RefusalKind::kFabricManagerUnusable,
            "the Fabric Manager partition table is not known yet"};
  }
  if (Refusal vfs = VfRefusal(s, devices); !vfs.text.empty()) return vfs;
  for (const auto& device : devices) {
    if (!s.module_of_bdf.count(GpuOf(s, device))) {
      return NotServable(GpuText(s, device) + " has no module id in the mapping");
    }
  }
  const auto unknown = GpusWithModulesUnknownToFabricManager(s);
  for (const auto& device : devices) {
    if (auto it = unknown.find(GpuOf(s, device)); it != unknown.end()) {
      return NotServable(GpuText(s, device) + " is mapped to module " + std::to_string(it->second) +
                         ", which Fabric Manager's partition table does not have");
    }
  }
  auto target = PartitionWithExactDevices(s, devices);
  if (!target) {
    std::ostringstream why;
    if (AnyVf(s, devices)) {
      std::vector<Bdf> gpus;
      for (const auto& device : devices) gpus.push_back(GpuOf(s, device));
      why << "VFs " << Join(devices) << " on GPUs " << Join(gpus)
          << " do not form one Fabric Manager partition";
    } else {
      why << "devices " << Join(devices) << " do not form one Fabric Manager partition";
    }
    std::vector<std::string> same_size;
    for (const auto& [pid, p] : s.partitions) {
      if (p.physical_ids.size() != devices.size()) continue;
      auto members = DevicesOfPartition(s, p);
      same_size.push_back(std::to_string(pid) + "=[" +
                          (members.bdfs.empty() ? members.missing_reason : Join(members.bdfs)) +
                          "]");
    }
    if (same_size.empty()) {
      why << "; no partition has " << devices.size() << " GPUs";
    } else {
      why << "; partitions of " << devices.size() << " GPUs: ";
      for (std::size_t i = 0; i < same_size.size(); ++i) why << (i ? " " : "") << same_size[i];
    }
    return NotServable(why.str());
  }
  const PartitionState& p = s.partitions.at(*target);
  if (p.degraded()) {
    return NotServable("partition " + std::to_string(p.id) + " is degraded (" +
                       std::to_string(p.nvlinks_available) + "/" + std::to_string(p.max_nvlinks) +
                       " NVLinks" + (p.unsupported ? ", unsupported by Fabric Manager" : "") + ")");
  }
  return {};
}

namespace {

Refusal ValidateRequest(const State& s, const RequestAllocation& r) {
  if (r.device_ids.empty()) return InvalidRequest("empty allocation request for " + r.resource);
  std::set<std::string> seen;
  for (const auto& id : r.device_ids) {
    if (id.empty()) return InvalidRequest("empty device id in request for " + r.resource);
    if (id.size() > kMaxDeviceIdLength) {
      return InvalidRequest("device id \"" + id.substr(0, kMaxDeviceIdLength) +
                            "...\" is longer than " + std::to_string(kMaxDeviceIdLength) +
                            " characters");
    }
    for (unsigned char c : id) {
      if (c == '/' || c == '\\' || c < 0x21 || c > 0x7e) {
        return InvalidRequest("device id \"" + id + "\" contains a path or control character");
      }
    }
    if (id == "." || id == "..") return InvalidRequest("device id \"" + id + "\" is not a device");
    if (!seen.insert(id).second) return InvalidRequest("device " + id + " is requested twice");
    auto device = s.devices.find(id);
    if (device == s.devices.end()) return InvalidRequest("unknown device " + id);
    if (device->second.resource != r.resource) {
      return InvalidRequest("device " + id + " belongs to " + device->second.resource + ", not " +
                            r.resource);
    }
    if (!device->second.healthy) {
      return NotServable("device " + id + " is unhealthy: " + device->second.unhealthy_reason);
    }
  }
  // One VM's devices are of one kind: a partition is never activated for two kinds at once.
  const DeviceState& first = s.devices.at(r.device_ids.front());
  for (const auto& id : r.device_ids) {
    const DeviceState& device = s.devices.at(id);
    if (device.kind != first.kind) {
      return InvalidRequest("request mixes device kinds: " + first.bdf + " is " +
                            DeviceKindName(first.kind) + ", " + id + " is " +
                            DeviceKindName(device.kind));
    }
  }
  return {};
}

// The request as journaled: every ID when it is accepted (they are then valid device IDs); the
// first few, escaped and cut, when it is refused. Returns how many IDs were left out.
std::size_t RequestedEvent(const AllocationId& id, const RequestAllocation& r, bool refused,
                           events::AllocationRequested& requested) {
  requested.set_allocation_id(id);
  requested.set_resource(r.resource);
  requested.set_container_index(r.container_index);
  const std::size_t kept =
      refused ? std::min(r.device_ids.size(), kMaxRefusedIdsKept) : r.device_ids.size();
  for (std::size_t i = 0; i < kept; ++i) {
    requested.add_device_ids(refused ? EscapeAndTruncate(r.device_ids[i], kMaxRefusedIdBytes)
                                     : r.device_ids[i]);
  }
  const std::size_t omitted = r.device_ids.size() - kept;
  requested.set_device_ids_omitted(static_cast<std::uint32_t>(omitted));
  return omitted;
}

void DecideRequest(Builder& b, const RequestAllocation& r) {
  const AllocationId id = AllocationIdFor(b.state().next_allocation_number);
  b.SetAllocation(id);
  Refusal refusal = ValidateRequest(b.state(), r);
  // An mdev vGPU is never in a Fabric Manager partition (SPEC §9): no FM check, no partition.
  const bool with_fm = b.state().fm_enabled && !AnyMdev(b.state(), r.device_ids);
  if (refusal.text.empty() && with_fm) refusal = FabricManagerRefusal(b.state(), r.device_ids);
  if (refusal.text.empty()) refusal = ClaimHoldsRefusal(b.state(), r.device_ids);

  events::AllocationRequested requested;
  const std::size_t omitted = RequestedEvent(id, r, !refusal.text.empty(), requested);
  GFP_EMIT(b, allocation_requested, requested);
  if (!refusal.text.empty()) {
    const std::string note =
        omitted ? " (… and " + std::to_string(omitted) + " more IDs not journaled)" : "";
    RejectAllocation(b, id, refusal.kind, refusal.text, nullptr, note);
    return;
  }

  // The kubelet is the authority on which devices are free: older allocations of any of these
  // devices are over.
  const std::set<Bdf> wanted(r.device_ids.begin(), r.device_ids.end());
  std::vector<const Allocation*> previous;
  for (const auto& [other_id, other] : b.state().allocations) {
    if (other_id == id || !other.live()) continue;
    if (std::any_of(other.devices.begin(), other.devices.end(),
                    [&](const Bdf& d) { return wanted.count(d) > 0; })) {
      previous.push_back(&other);
    }
  }
  std::vector<std::pair<AllocationId, bool>> to_end;  // id, same device set
  for (const Allocation* other : previous) {
    std::set<Bdf> theirs(other->devices.begin(), other->devices.end());
    to_end.emplace_back(other->id, theirs == wanted);
  }
  for (const auto& [other_id, same_set] : to_end) {
    const Allocation& other = b.state().allocations.at(other_id);
    if (other.status == AllocationStatus::kRequested) {
      // Its own caller gets the refusal; this request goes on.
      events::AllocationRejected rejected;
      rejected.set_allocation_id(other_id);
      rejected.set_reason("superseded by " + id + " before it completed");
      GFP_EMIT(b, allocation_rejected, rejected);
      continue;
    }
    events::AllocationReleased released;
    released.set_allocation_id(other_id);
    released.set_reason(same_set ? events::AllocationReleased::REASON_SUPERSEDED
                                 : events::AllocationReleased::REASON_DEVICES_REALLOCATED);
    released.set_detail("kubelet allocated its devices again (" + id + ")");
    GFP_EMIT(b, allocation_released, released);
  }

  if (!with_fm) {
    Grant(b, id, std::nullopt);
    return;
  }
  ContinueAllocation(b, id);
}

// The allocation an outcome's intent was for is still waiting for its answer.
bool StillRequested(const Builder& b, const AllocationId& id) {
  auto it = b.state().allocations.find(id);
  return it != b.state().allocations.end() && it->second.status == AllocationStatus::kRequested;
}

// " (message)" when Fabric Manager gave one.
std::string FmMessageText(const events::FmResult& fm) {
  return fm.message().empty() ? "" : " (" + fm.message() + ")";
}

void DecideDeactivationOutcome(Builder& b, const RecordFabricManagerOutcome& o,
                               const AllocationId& for_allocation) {
  if (FmCallSucceeded(o.fm) || FmAnswered(o.fm, fm_codes::kUninitialized)) {
    events::PartitionDeactivated done;
    done.set_partition_id(o.partition_id);
    done.set_was_already_inactive(FmAnswered(o.fm, fm_codes::kUninitialized));
    GFP_EMIT(b, partition_deactivated, done);
    if (!StillRequested(b, for_allocation)) return;
    if (o.interrupted) {
      RejectAllocation(b, for_allocation, RefusalKind::kInterrupted,
                       InterruptedText(o.interrupted_cause));
    } else {
      ContinueAllocation(b, for_allocation);
    }
    return;
  }
  events::PartitionDeactivationFailed failed;
  failed.set_partition_id(o.partition_id);
  *failed.mutable_fm() = o.fm;
  GFP_EMIT(b, partition_deactivation_failed, failed);
  if (StillRequested(b, for_allocation)) {
    RejectAllocation(b, for_allocation, FmRefusalKind(o.fm),
                     "could not deactivate stale partition " + std::to_string(o.partition_id) +
                         ": " + FmText(o.fm) + FmMessageText(o.fm),
                     &o.fm);
  } else {
    b.Refuse(FmRefusal(o.fm, "could not deactivate partition " + std::to_string(o.partition_id) +
                                 ": " + FmText(o.fm)),
             o.fm.code());
  }
}

void DecideActivationOutcome(Builder& b, const RecordFabricManagerOutcome& o,
                             const AllocationId& for_allocation, const std::vector<Bdf>& vfs) {
  if (FmCallSucceeded(o.fm)) {
    events::PartitionActivated done;
    done.set_partition_id(o.partition_id);
    done.set_allocation_id(for_allocation);
    for (const Bdf& vf : vfs) done.add_vf_bdfs(vf);
    GFP_EMIT(b, partition_activated, done);
    if (!StillRequested(b, for_allocation)) return;
    // An interrupted request's partition stays active without an owner: kubelet's retry of
    // the same devices claims it without an FM call, otherwise it is released after the grace.
    if (o.interrupted) {
      RejectAllocation(b, for_allocation, RefusalKind::kInterrupted,
                       InterruptedText(o.interrupted_cause));
    } else {
      Grant(b, for_allocation, o.partition_id);
    }
    return;
  }
  events::PartitionActivationFailed failed;
  failed.set_partition_id(o.partition_id);
  failed.set_allocation_id(for_allocation);
  *failed.mutable_fm() = o.fm;
  GFP_EMIT(b, partition_activation_failed, failed);
  const std::string why = "Fabric Manager could not activate partition " +
                          std::to_string(o.partition_id) + ": " + FmText(o.fm) +
                          FmMessageText(o.fm);
  if (StillRequested(b, for_allocation)) {
    RejectAllocation(b, for_allocation, FmRefusalKind(o.fm), why, &o.fm);
  } else {
    b.Refuse(FmRefusal(o.fm, why), o.fm.code());
  }
}

void DecideOutcome(Builder& b, const RecordFabricManagerOutcome& o) {
  auto pending = b.state().intents.find(o.partition_id);
  if (pending == b.state().intents.end() || pending->second.kind != o.kind) {
    b.Refuse(NotServable("no pending " + std::string(IntentKindName(o.kind)) + " for partition " +
                         std::to_string(o.partition_id)));
    return;
  }
  // Copies: the events emitted next end the intent that `pending` points at.
  const AllocationId for_allocation = pending->second.allocation_id;
  const std::vector<Bdf> vfs = pending->second.vf_bdfs;
  b.SetAllocation(for_allocation);
  if (o.kind == IntentKind::kDeactivate) {
    DecideDeactivationOutcome(b, o, for_allocation);
  } else {
    DecideActivationOutcome(b, o, for_allocation, vfs);
  }
}

void DecideEnsureActive(Builder& b, const EnsurePartitionActive& e) {
  const State& s = b.state();
  if (!s.fm_enabled) return;
  const std::set<Bdf> wanted(e.device_ids.begin(), e.device_ids.end());
  const Allocation* owner = nullptr;
  for (const auto& [id, a] : s.allocations) {
    if (!a.live() || a.status == AllocationStatus::kRequested) continue;
    if (std::set<Bdf>(a.devices.begin(), a.devices.end()) == wanted) owner = &a;  // newest wins
  }
  if (!owner || !owner->partition) {
    b.Refuse(NotServable("no granted allocation holds exactly devices " +
                         EscapeAndTruncate(Join(e.device_ids), kMaxReasonBytes)));
    return;
  }
  const PartitionId pid = *owner->partition;
  b.SetAllocation(owner->id);
  if (s.active.count(pid)) return;
  if (auto pending = s.intents.find(pid); pending != s.intents.end()) {
    b.Refuse(NotServable(PendingText(pending->second, pid)));
    return;
  }
  std::set<Bdf> devices(owner->devices.begin(), owner->devices.end());
  auto overlapping = ActivePartitionsOverlapping(s, devices);
  if (!overlapping.empty()) {
    b.Refuse(NotServable("partition " + std::to_string(pid) +
                         " cannot be re-activated: its GPUs are in active partition " +
                         std::to_string(overlapping.front())));
    return;
  }
  if (std::string problem = VfOrderProblem(s, *owner, pid); !problem.empty()) {
    b.Refuse(NotServable(problem));
    return;
  }
  RequestActivation(b, pid, owner->id, "re-activation before container start",
                    VfListFor(s, *owner, pid));
}

// Partitions that are active, in transition, or granted to a live allocation.
std::set<PartitionId> PartitionsInUse(const State& s) {
  std::set<PartitionId> out;
  for (const auto& [pid, active] : s.active) out.insert(pid);
  for (const auto& [pid, intent] : s.intents) out.insert(pid);
  for (const auto& [id, a] : s.allocations) {
    if (a.partition) out.insert(*a.partition);
  }
  return out;
}

bool SameTable(const State& s, const std::map<PartitionId, PartitionState>& table) {
  return s.partitions == table;
}

// The granted allocation whose partition `pid` is, if any: an activation for it (a repair) whose
// reply was lost or came after the deadline took effect, so the partition is its again. FM does
// not say which VFs an activation carried; a VF allocation's partition is taken to carry the
// allocation's list, the one every activation for it passes. (A partition an operator activated
// by hand with other VFs is not told apart, as one activated by hand for whole GPUs is not;
// leaving it ownerless instead left a running VM's partition with no owner and nothing that
// would ever give it one: GFP_SIM_SEED=20029.)
std::optional<AllocationId> AllocationOfPartition(const State& state, PartitionId pid) {
  for (const auto& [id, a] : state.allocations) {
    if (a.partition != pid) continue;
    if (a.status == AllocationStatus::kGranted || a.status == AllocationStatus::kBound) return id;
  }
  return std::nullopt;
}

// FM's partition table, journaled when it differs from the state's. False when it is refused: a
// partition listed twice, or a change to a partition in use.
bool RecordPartitionTable(Builder& b, const ObserveFabricState& f,
                          std::set<PartitionId>& fm_active) {
  std::map<PartitionId, PartitionState> table;
  events::PartitionTableObserved observed;
  for (const auto& p : f.partitions) {
    if (table.count(p.id())) {
      b.Refuse(NotServable("Fabric Manager listed partition " + std::to_string(p.id()) + " twice"));
      return false;
    }
    table[p.id()] = PartitionFromEvent(p);
    if (p.active()) fm_active.insert(p.id());
    *observed.add_partitions() = p;
  }
  if (SameTable(b.state(), table)) return true;
  // FM's tables are static; a change to a partition in use would orphan a VM's GPUs, so it is
  // refused (and reported) rather than recorded.
  for (PartitionId pid : PartitionsInUse(b.state())) {
    auto before = b.state().partitions.find(pid);
    auto after = table.find(pid);
    if (before != b.state().partitions.end() &&
        (after == table.end() || after->second.physical_ids != before->second.physical_ids)) {
      b.Refuse(NotServable("Fabric Manager changed the GPUs of partition " + std::to_string(pid) +
                           " while it is in use; keeping the journal's table"));
      return false;
    }
  }
  GFP_EMIT(b, partition_table_observed, observed);
  return true;
}

// Where the journal's active set and FM's differ: partitions active only in the journal, then
// partitions active only in FM (adopted, for the allocation whose partition it is, if any).
void JournalDrift(Builder& b, const std::set<PartitionId>& fm_active) {
  for (const auto& [pid, active] : std::map<PartitionId, ActivePartition>(b.state().active)) {
    if (fm_active.count(pid)) continue;
    events::DriftDetected drift;
    drift.set_partition_id(pid);
    drift.set_kind(events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY);
    drift.set_detail("journal has partition " + std::to_string(pid) +
                     " active, Fabric Manager reports it inactive");
    GFP_EMIT(b, drift_detected, drift);
  }
  for (PartitionId pid : fm_active) {
    if (b.state().active.count(pid)) continue;
    events::DriftDetected drift;
    drift.set_partition_id(pid);
    drift.set_kind(events::DriftDetected::KIND_ACTIVE_IN_FM_ONLY);
    const std::optional<AllocationId> owner = AllocationOfPartition(b.state(), pid);
    drift.set_detail("Fabric Manager has partition " + std::to_string(pid) +
                     " active without a journaled activation; adopted" +
                     (owner ? " for allocation " + *owner + ", whose partition it is" : ""));
    if (owner) {
      drift.set_owner_allocation_id(*owner);
      for (const Bdf& vf : b.state().allocations.at(*owner).fabric_vfs) drift.add_vf_bdfs(vf);
    }
    GFP_EMIT(b, drift_detected, drift);
  }
}

// Every granted allocation whose pod still holds its GPUs gets its partition back: the one
// just found lost, and one whose earlier repair failed (judged again on every observation).
void RepairLostPartitions(Builder& b, const ObserveFabricState& f) {
  const std::set<AllocationId> held(f.held_allocations.begin(), f.held_allocations.end());
  std::vector<std::pair<PartitionId, AllocationId>> repairs;
  for (const auto& [id, a] : b.state().allocations) {
    if (!a.partition || b.state().active.count(*a.partition)) continue;
    if (a.status != AllocationStatus::kGranted && a.status != AllocationStatus::kBound) continue;
    // A prepared claim holds its GPUs until it is unprepared, whatever PodResources says.
    if (f.pod_holders_known && !held.count(id) && !a.claim) continue;
    repairs.emplace_back(*a.partition, id);
  }
  for (const auto& [pid, owner] : repairs) {
    const Allocation& a = b.state().allocations.at(owner);
    std::set<Bdf> devices(a.devices.begin(), a.devices.end());
    if (!ActivePartitionsOverlapping(b.state(), devices).empty()) continue;
    if (b.state().intents.count(pid)) continue;
    if (std::string problem = VfOrderProblem(b.state(), a, pid); !problem.empty()) {
      b.Refuse(NotServable(problem));  // reported each observation; never a different list
      continue;
    }
    RequestActivation(b, pid, owner, "drift repair: a pod still holds its GPUs",
                      VfListFor(b.state(), a, pid));
  }
}

void DecideFabricState(Builder& b, const ObserveFabricState& f) {
  std::set<PartitionId> fm_active;
  if (!RecordPartitionTable(b, f, fm_active)) return;
  // Transitions in flight will report their own outcome; judge drift only when none is.
  if (!b.state().intents.empty()) return;
  JournalDrift(b, fm_active);
  RepairLostPartitions(b, f);
}

void DecidePods(Builder& b, const ObservePodResources& o) {
  std::vector<events::AllocationBound> bound;
  for (const auto& [id, a] : b.state().allocations) {
    // A claim's pods reach its GPUs through CDI: PodResources does not bind it.
    if (a.status != AllocationStatus::kGranted || a.claim) continue;
    const std::set<Bdf> mine(a.devices.begin(), a.devices.end());
    for (const auto& c : o.containers) {
      if (c.resource != a.resource ||
          std::none_of(c.device_ids.begin(), c.device_ids.end(),
                       [&](const std::string& d) { return mine.count(d) > 0; })) {
        continue;
      }
      events::AllocationBound event;
      event.set_allocation_id(id);
      event.set_pod_namespace(c.pod_namespace);
      event.set_pod_name(c.pod_name);
      event.set_container_name(c.container_name);
      bound.push_back(std::move(event));
      break;
    }
  }
  for (const auto& event : bound) GFP_EMIT(b, allocation_bound, event);
}

void DecideRelease(Builder& b, const ReleaseAllocation& r) {
  auto it = b.state().allocations.find(r.allocation_id);
  if (it == b.state().allocations.end() || !it->second.live()) {
    b.Refuse(NotServable("allocation " + r.allocation_id + " is not live"));
    return;
  }
  if (it->second.status == AllocationStatus::kRequested) {
    b.Refuse(NotServable("allocation " + r.allocation_id + " is still being decided"));
    return;
  }
  if (it->second.claim) {
    b.Refuse(NotServable("allocation " + r.allocation_id + " prepares claim " +
                         ClaimText(*it->second.claim) + ", which ends by its unprepare"));
    return;
  }
  const std::optional<PartitionId> partition = it->second.partition;
  events::AllocationReleased released;
  released.set_allocation_id(r.allocation_id);
  released.set_reason(r.reason);
  released.set_detail(r.detail);
  GFP_EMIT(b, allocation_released, released);
  if (!partition) return;
  auto active = b.state().active.find(*partition);
  if (active == b.state().active.end() || !active->second.owner.empty() ||
      b.state().intents.count(*partition)) {
    return;
  }
  RequestDeactivation(b, *partition, "allocation " + r.allocation_id + " released", "");
}

void DecideOrphan(Builder& b, const ReleaseOrphanPartition& r) {
  auto active = b.state().active.find(r.partition_id);
  if (active == b.state().active.end()) {
    b.Refuse(NotServable("partition " + std::to_string(r.partition_id) + " is not active"));
    return;
  }
  if (!active->second.owner.empty()) {
    b.Refuse(NotServable("partition " + std::to_string(r.partition_id) +
                         " is owned by allocation " + active->second.owner));
    return;
  }
  if (auto pending = b.state().intents.find(r.partition_id); pending != b.state().intents.end()) {
    b.Refuse(NotServable(PendingText(pending->second, r.partition_id)));
    return;
  }
  RequestDeactivation(b, r.partition_id, r.reason, "");
}

void DecideAbandon(Builder& b, const AbandonInterruptedRequests& command) {
  std::vector<AllocationId> abandoned;
  for (const auto& [id, a] : b.state().allocations) {
    if (a.status != AllocationStatus::kRequested) continue;
    const bool waiting =
        std::any_of(b.state().intents.begin(), b.state().intents.end(),
                    // clang 14 cannot capture a structured binding
                    [&id = id](const auto& i) { return i.second.allocation_id == id; });
    if (!waiting) abandoned.push_back(id);
  }
  for (const auto& id : abandoned) {
    RejectAllocation(b, id, RefusalKind::kInterrupted, InterruptedText(command.cause));
  }
}

std::vector<events::Device> SortedDevices(std::vector<events::Device> devices) {
  std::sort(devices.begin(), devices.end(),
            [](const auto& x, const auto& y) { return x.bdf() < y.bdf(); });
  return devices;
}

bool SameInventory(const State& s, const ObserveInventory& o) {
  if (s.devices.size() != o.devices.size()) return false;
  if (s.inventory_warnings != o.warnings) return false;
  for (const auto& d : o.devices) {
    auto it = s.devices.find(d.bdf());
    if (it == s.devices.end()) return false;
    const DeviceState& have = it->second;
    if (have.resource != d.resource() || have.device_id != d.device_id() ||
        have.iommu_group != d.iommu_group() || have.numa_node != std::max(0, d.numa_node())) {
      return false;
    }
  }
  return true;
}

struct Dispatch {
  Builder& b;

  void operator()(const StartPlugin& c) {
    events::PluginStarted e;
    e.set_version(c.version);
    e.set_fabric_manager_enabled(c.fabric_manager_enabled);
    e.set_node_name(c.node_name);
    e.set_release_grace_micros(c.release_grace);
    GFP_EMIT(b, plugin_started, e);
  }
  void operator()(const ObserveInventory& c) {
    if (SameInventory(b.state(), c)) return;
    events::InventoryObserved e;
    for (auto& d : SortedDevices(c.devices)) *e.add_devices() = d;
    for (const auto& w : c.warnings) e.add_warnings(w);
    GFP_EMIT(b, inventory_observed, e);
  }
  void operator()(const ObserveModuleMapping& c) {
    std::map<Bdf, ModuleId> wanted;
    for (const auto& a : c.assignments) wanted[a.bdf()] = a.module_id();
    if (wanted == b.state().module_of_bdf && c.path == b.state().module_mapping_path) return;
    // A new mapping must not move the GPUs of a partition in use.
    for (PartitionId pid : PartitionsInUse(b.state())) {
      auto partition = b.state().partitions.find(pid);
      if (partition == b.state().partitions.end()) continue;
      for (ModuleId module : partition->second.physical_ids) {
        auto before = b.state().bdf_of_module.find(module);
        std::string after;
        for (const auto& [bdf, m] : wanted) {
          if (m == module) after = bdf;
        }
        if (before != b.state().bdf_of_module.end() && before->second != after) {
          b.Refuse(NotServable("module mapping " + c.path + " moves module " +
                               std::to_string(module) + " of partition " + std::to_string(pid) +
                               " (in use) from " + before->second + " to " +
                               (after.empty() ? "nowhere" : after)));
          return;
        }
      }
    }
    events::ModuleMappingLoaded e;
    e.set_path(c.path);
    for (const auto& [bdf, module] : wanted) {
      auto* a = e.add_assignments();
      a->set_bdf(bdf);
      a->set_module_id(module);
    }
    GFP_EMIT(b, module_mapping_loaded, e);
  }
  void operator()(const ObserveDeviceHealth& c) {
    auto it = b.state().devices.find(c.bdf);
    if (it == b.state().devices.end()) {
      b.Refuse(InvalidRequest("unknown device " + c.bdf));
      return;
    }
    if (it->second.healthy == c.healthy) return;
    events::DeviceHealthChanged e;
    e.set_bdf(c.bdf);
    e.set_healthy(c.healthy);
    e.set_reason(c.reason);
    GFP_EMIT(b, device_health_changed, e);
  }
  void operator()(const ObserveFabricManagerConnection& c) {
    if (c.connected) {
      if (b.state().fm_connected && b.state().fm_address == c.address) return;
      events::FabricManagerConnected e;
      e.set_address(c.address);
      e.set_connect_params_version(c.connect_params_version);
      GFP_EMIT(b, fabric_manager_connected, e);
    } else {
      // Journaled on the way down, and once after a start that found FM unreachable.
      if (!b.state().fm_connected && b.state().fm_status_journaled) return;
      events::FabricManagerDisconnected e;
      e.set_reason(c.reason);
      *e.mutable_fm() = c.fm;
      GFP_EMIT(b, fabric_manager_disconnected, e);
    }
  }
  void operator()(const ObserveFabricState& c) { DecideFabricState(b, c); }
  void operator()(const ObserveKubeletRestart& c) {
    events::KubeletRestartObserved e;
    e.set_reason(c.reason);
    GFP_EMIT(b, kubelet_restart_observed, e);
  }
  void operator()(const RequestAllocation& c) { DecideRequest(b, c); }
  void operator()(const RecordFabricManagerOutcome& c) { DecideOutcome(b, c); }
  void operator()(const EnsurePartitionActive& c) { DecideEnsureActive(b, c); }
  void operator()(const ObservePodResources& c) { DecidePods(b, c); }
  void operator()(const ReleaseAllocation& c) { DecideRelease(b, c); }
  void operator()(const ReleaseOrphanPartition& c) { DecideOrphan(b, c); }
  void operator()(const ResyncFabricManager&) {
    Effect effect{Effect::Kind::kSetActivatedPartitions, 0, {}, {}};
    for (const auto& [pid, active] : b.state().active) effect.partition_ids.push_back(pid);
    b.Effect(effect);
  }
  void operator()(const AbandonInterruptedRequests& c) { DecideAbandon(b, c); }
  void operator()(const PrepareClaim& c) { DecidePrepareClaim(b, c); }
  void operator()(const RecordClaimFiles& c) { DecideRecordClaimFiles(b, c); }
  void operator()(const UnprepareClaim& c) { DecideUnprepareClaim(b, c); }
  void operator()(const RecordClaimFilesRemoved& c) { DecideClaimFilesRemoved(b, c); }
  void operator()(const RecordResourceSlicePublished& c) { DecideSlicePublished(b, c); }
  void operator()(const RecordResyncOutcome& c) {
    // Only a resync that took effect is journaled: FM refuses it while it is still starting,
    // and the plugin retries every interval, which would otherwise flood the audit trail.
    if (!FmCallSucceeded(c.fm)) {
      b.Refuse(FmRefusal(c.fm, "Fabric Manager refused the active partition list: " + FmText(c.fm)),
               c.fm.code());
      return;
    }
    events::FabricManagerResynced e;
    for (PartitionId pid : c.partition_ids) e.add_partition_ids(pid);
    *e.mutable_fm() = c.fm;
    GFP_EMIT(b, fabric_manager_resynced, e);
  }
};

Micros TimeOf(const Command& command) {
  return std::visit([](const auto& c) { return c.now; }, command);
}

}  // namespace

Command OutcomeOf(const Effect& effect, Micros now, const events::FmResult& fm) {
  if (effect.kind == Effect::Kind::kSetActivatedPartitions) {
    return RecordResyncOutcome{now, effect.partition_ids, fm};
  }
  RecordFabricManagerOutcome recorded;
  recorded.now = now;
  recorded.kind = effect.kind == Effect::Kind::kActivatePartition ? IntentKind::kActivate
                                                                  : IntentKind::kDeactivate;
  recorded.partition_id = effect.partition_id;
  recorded.fm = fm;
  return recorded;
}

Decision Decide(const State& state, const Command& command) {
  Builder builder(state, TimeOf(command));
  std::visit(Dispatch{builder}, command);
  return builder.Take();
}

}  // namespace gfp::sm
