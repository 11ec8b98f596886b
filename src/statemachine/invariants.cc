#include "statemachine/invariants.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "common/strings.h"

namespace gfp::sm {
namespace {

std::string P(PartitionId id) { return "partition " + std::to_string(id); }

// A VF list handed to FM for `pid`: empty (whole GPUs) or one VF per GPU of the partition, the
// i-th on its i-th GPU (checked for the VFs and mapping the state knows).
Status CheckVfList(const State& s, PartitionId pid, const std::vector<Bdf>& vfs, const char* what) {
  auto partition = s.partitions.find(pid);
  if (vfs.empty() || partition == s.partitions.end()) return Status::Ok();
  if (vfs.size() != partition->second.physical_ids.size()) {
    return Internal(P(pid) + " " + what + " " + std::to_string(vfs.size()) + " VFs for " +
                    std::to_string(partition->second.physical_ids.size()) + " GPUs");
  }
  const PartitionDevices gpus = DevicesOfPartition(s, partition->second);
  for (std::size_t i = 0; i < gpus.bdfs.size(); ++i) {
    auto vf = s.devices.find(vfs[i]);
    if (vf == s.devices.end() || vf->second.parent_bdf.empty()) continue;
    if (vf->second.parent_bdf != gpus.bdfs[i]) {
      return Internal(P(pid) + " " + what + " VF " + vfs[i] + " in place " + std::to_string(i) +
                      ", which is GPU " + gpus.bdfs[i] + " and not its GPU " +
                      vf->second.parent_bdf);
    }
  }
  return Status::Ok();
}

// Whether an allocation's devices are VFs, from the devices the state still knows; nullopt when
// it knows none of them.
std::optional<bool> DevicesAreVfs(const State& s, const Allocation& a) {
  for (const Bdf& id : a.devices) {
    auto device = s.devices.find(id);
    if (device != s.devices.end()) return device->second.kind == DeviceKind::kVgpuVf;
  }
  return std::nullopt;
}

// VF lists: well formed on active partitions and intents; an allocation's list is a permutation
// of its devices; a partition owned by a live allocation was activated with the owner's list,
// which is non-empty exactly when the owner's devices are VFs (never two device kinds at once).
Status CheckVfLists(const State& s) {
  for (const auto& [pid, active] : s.active) {
    GFP_RETURN_IF_ERROR(CheckVfList(s, pid, active.vf_bdfs, "is active with"));
  }
  for (const auto& [pid, intent] : s.intents) {
    GFP_RETURN_IF_ERROR(CheckVfList(s, pid, intent.vf_bdfs, "has a pending activation with"));
  }
  for (const auto& [id, a] : s.allocations) {
    if (a.fabric_vfs.empty()) continue;
    if (!std::is_permutation(a.fabric_vfs.begin(), a.fabric_vfs.end(), a.devices.begin(),
                             a.devices.end())) {
      return Internal("allocation " + id + " has VF list [" + Join(a.fabric_vfs) +
                      "] which is not a permutation of its devices");
    }
    if (a.partition) {
      GFP_RETURN_IF_ERROR(CheckVfList(s, *a.partition, a.fabric_vfs, "is granted with"));
    }
  }
  for (const auto& [pid, active] : s.active) {
    auto owner = s.allocations.find(active.owner);
    if (active.owner.empty() || owner == s.allocations.end()) continue;
    if (active.vf_bdfs != owner->second.fabric_vfs) {
      return Internal(P(pid) + " is active with VFs [" + Join(active.vf_bdfs) + "], its owner " +
                      active.owner + " has [" + Join(owner->second.fabric_vfs) + "]");
    }
    const std::optional<bool> vfs = DevicesAreVfs(s, owner->second);
    if (vfs && *vfs == active.vf_bdfs.empty()) {
      return Internal(P(pid) + " is active " +
                      (*vfs ? "without VFs for VFs of " : "with VFs for whole GPUs of ") +
                      "allocation " + active.owner);
    }
  }
  return Status::Ok();
}

// No GPU is in two active partitions.
Status CheckNoGpuInTwoActivePartitions(const State& s) {
  std::map<Bdf, PartitionId> holder;
  for (const auto& [pid, active] : s.active) {
    auto partition = s.partitions.find(pid);
    if (partition == s.partitions.end()) continue;  // table changed under an active partition
    for (ModuleId module : partition->second.physical_ids) {
      auto bdf = s.bdf_of_module.find(module);
      if (bdf == s.bdf_of_module.end()) continue;
      auto [it, fresh] = holder.emplace(bdf->second, pid);
      if (!fresh) {
        return Internal("GPU " + bdf->second + " is in active " + P(it->second) + " and " + P(pid));
      }
    }
  }
  return Status::Ok();
}

// Every active partition is owned by a live allocation that points back at it, adopted, or
// ownerless (its owner was released and its deactivation is pending or will be retried).
Status CheckActiveOwners(const State& s) {
  for (const auto& [pid, active] : s.active) {
    if (active.adopted && !active.owner.empty()) {
      return Internal(P(pid) + " is both adopted and owned by " + active.owner);
    }
    if (active.owner.empty()) continue;
    auto owner = s.allocations.find(active.owner);
    if (owner == s.allocations.end() || !owner->second.live()) {
      return Internal(P(pid) + " is owned by allocation " + active.owner + " which is not live");
    }
    if (owner->second.partition != pid) {
      return Internal(P(pid) + " is owned by allocation " + active.owner +
                      " which was granted another partition");
    }
  }
  return Status::Ok();
}

// A partition has at most one transition in flight, consistent with its activity.
Status CheckIntents(const State& s) {
  for (const auto& [pid, intent] : s.intents) {
    const bool is_active = s.active.count(pid) > 0;
    if (intent.kind == IntentKind::kActivate && is_active) {
      return Internal(P(pid) + " has a pending activation but is already active");
    }
    if (intent.kind == IntentKind::kDeactivate && !is_active) {
      return Internal(P(pid) + " has a pending deactivation but is not active");
    }
    // Never deactivate a running VM's partition: only ownerless partitions are deactivated.
    if (intent.kind == IntentKind::kDeactivate && !s.active.at(pid).owner.empty()) {
      return Internal(P(pid) + " has a pending deactivation while owned by " +
                      s.active.at(pid).owner);
    }
    if (intent.requested_seq > s.last_seq) {
      return Internal(P(pid) + " has an intent from the future (seq " +
                      std::to_string(intent.requested_seq) + ")");
    }
  }
  return Status::Ok();
}

// A granted FM allocation of whole GPUs holds exactly its partition's GPUs.
Status CheckGrantedGpus(const State& s, const AllocationId& id, const Allocation& a) {
  // VFs: their list is checked against the partition's GPUs (CheckVfLists).
  if (!a.partition || !a.fabric_vfs.empty()) return Status::Ok();
  auto partition = s.partitions.find(*a.partition);
  if (partition == s.partitions.end()) return Status::Ok();  // the table changed since the grant
  std::set<Bdf> gpus;
  for (ModuleId module : partition->second.physical_ids) {
    auto bdf = s.bdf_of_module.find(module);
    if (bdf != s.bdf_of_module.end()) gpus.insert(bdf->second);
  }
  if (gpus != std::set<Bdf>(a.devices.begin(), a.devices.end())) {
    return Internal("allocation " + id + " holds devices that are not exactly the GPUs of " +
                    P(*a.partition));
  }
  return Status::Ok();
}

// Only live allocations are kept; a granted FM allocation's devices are its partition's GPUs.
Status CheckAllocations(const State& s) {
  for (const auto& [id, a] : s.allocations) {
    if (!a.live()) return Internal("allocation " + id + " is kept in memory while finished");
    if (a.status == AllocationStatus::kRequested) {
      if (a.partition) return Internal("allocation " + id + " has a partition before its grant");
      continue;
    }
    if (a.granted_at < a.requested_at) {
      return Internal("allocation " + id + " was granted before it was requested");
    }
    GFP_RETURN_IF_ERROR(CheckGrantedGpus(s, id, a));
  }
  return Status::Ok();
}

// The module mapping is a bijection.
Status CheckModuleMapping(const State& s) {
  if (s.module_of_bdf.size() != s.bdf_of_module.size()) {
    return Internal("module mapping is not one-to-one");
  }
  for (const auto& [bdf, module] : s.module_of_bdf) {
    auto back = s.bdf_of_module.find(module);
    if (back == s.bdf_of_module.end() || back->second != bdf) {
      return Internal("module mapping is not one-to-one at " + bdf);
    }
  }
  return Status::Ok();
}

// DRA claims: a claim's allocation has one request per device, is granted before it is prepared
// and never bound; one claim uid is held once, live or being unprepared, never both.
Status CheckClaims(const State& s) {
  std::set<std::string> uids;
  for (const auto& [id, a] : s.allocations) {
    if (!a.claim) continue;
    const Claim& c = *a.claim;
    if (c.requests.size() != a.devices.size()) {
      return Internal("claim allocation " + id + " has " + std::to_string(c.requests.size()) +
                      " request names for " + std::to_string(a.devices.size()) + " devices");
    }
    if (a.status == AllocationStatus::kBound)
      return Internal("claim allocation " + id + " is bound");
    if (c.prepared && a.status != AllocationStatus::kGranted) {
      return Internal("claim allocation " + id + " is prepared before it was granted");
    }
    if (!uids.insert(c.uid).second) return Internal("claim uid " + c.uid + " is held twice");
  }
  for (const auto& [uid, u] : s.unpreparing_claims) {
    if (u.claim.uid != uid)
      return Internal("unpreparing claim " + uid + " records uid " + u.claim.uid);
    if (uids.count(uid)) return Internal("claim uid " + uid + " is live and being unprepared");
    if (s.allocations.count(u.allocation_id)) {
      return Internal("unpreparing claim " + uid + " still has live allocation " + u.allocation_id);
    }
  }
  return Status::Ok();
}

// The allocation id counter is ahead of every live allocation.
Status CheckAllocationCounter(const State& s) {
  for (const auto& [id, a] : s.allocations) {
    std::uint64_t n = 0;
    const char* digits = id.data() + 6;
    const char* end = id.data() + id.size();
    if (id.starts_with("alloc-") && std::from_chars(digits, end, n).ptr == end &&
        n >= s.next_allocation_number) {
      return Internal("allocation counter " + std::to_string(s.next_allocation_number) +
                      " is not ahead of " + id);
    }
  }
  return Status::Ok();
}

}  // namespace

// The checks run in this order, and the first violation found is the one reported.
Status CheckInvariants(const State& s) {
  GFP_RETURN_IF_ERROR(CheckNoGpuInTwoActivePartitions(s));
  GFP_RETURN_IF_ERROR(CheckActiveOwners(s));
  GFP_RETURN_IF_ERROR(CheckIntents(s));
  GFP_RETURN_IF_ERROR(CheckAllocations(s));
  GFP_RETURN_IF_ERROR(CheckVfLists(s));
  GFP_RETURN_IF_ERROR(CheckModuleMapping(s));
  GFP_RETURN_IF_ERROR(CheckClaims(s));
  return CheckAllocationCounter(s);
}

}  // namespace gfp::sm
