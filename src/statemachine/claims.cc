#include "statemachine/claims.h"

namespace gfp::sm {
namespace {

// The claim's partition is active and its own (or there is no partition: no Fabric Manager).
bool PartitionReady(const State& s, const Allocation& a) {
  if (!a.partition) return true;
  auto active = s.active.find(*a.partition);
  return active != s.active.end() && active->second.owner == a.id;
}

}  // namespace

const Allocation* ClaimAllocation(const State& state, const std::string& claim_uid) {
  for (const auto& [id, a] : state.allocations) {
    if (a.claim && a.claim->uid == claim_uid) return &a;
  }
  return nullptr;
}

const char* ClaimProgressName(ClaimProgress progress) {
  switch (progress) {
    case ClaimProgress::kUnknown:
      return "unknown";
    case ClaimProgress::kPreparing:
      return "preparing";
    case ClaimProgress::kWriteFiles:
      return "write-files";
    case ClaimProgress::kPrepared:
      return "prepared";
    case ClaimProgress::kDeactivating:
      return "deactivating";
    case ClaimProgress::kRemoveFiles:
      return "remove-files";
  }
  return "?";
}

ClaimProgress ClaimProgressOf(const State& state, const std::string& claim_uid) {
  if (const Allocation* a = ClaimAllocation(state, claim_uid)) {
    if (a->status != AllocationStatus::kGranted || !PartitionReady(state, *a)) {
      return ClaimProgress::kPreparing;
    }
    return a->claim->prepared ? ClaimProgress::kPrepared : ClaimProgress::kWriteFiles;
  }
  auto unpreparing = state.unpreparing_claims.find(claim_uid);
  if (unpreparing == state.unpreparing_claims.end()) return ClaimProgress::kUnknown;
  const auto& partition = unpreparing->second.partition;
  if (partition) {
    auto active = state.active.find(*partition);
    if (active != state.active.end() && active->second.owner.empty()) {
      return ClaimProgress::kDeactivating;
    }
  }
  return ClaimProgress::kRemoveFiles;
}

std::string ClaimText(const Claim& claim) {
  return claim.namespace_name + "/" + claim.name + " (uid " + claim.uid + ")";
}

}  // namespace gfp::sm
