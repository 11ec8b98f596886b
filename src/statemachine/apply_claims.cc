#include "statemachine/apply_claims.h"

#include "statemachine/claims.h"

namespace gfp::sm {
namespace {

class ClaimApplier : public ApplyScope {
 public:
  explicit ClaimApplier(ApplyScope& scope) : ApplyScope(scope) {}

  void On(const events::ClaimPrepareRequested& e) {
    if (e.repair()) {
      Allocation* a = ClaimOf(e.allocation_id(), e.claim().uid(), "ClaimPrepareRequested");
      if (a) a->claim->prepared = false;  // its files are written again before ClaimPrepared
      return;
    }
    const std::string& uid = e.claim().uid();
    if (s_.allocations.count(e.allocation_id())) {
      Anomaly("allocation " + e.allocation_id() + " requested twice");
      return;
    }
    if (ClaimAllocation(s_, uid) || s_.unpreparing_claims.count(uid)) {
      Anomaly("claim uid " + uid + " prepared by " + e.allocation_id() +
              " while another allocation holds it");
      return;
    }
    Allocation a;
    a.id = e.allocation_id();
    a.requested_at = time_;
    Claim claim;
    claim.uid = uid;
    claim.namespace_name = e.claim().namespace_();
    claim.name = e.claim().name();
    for (const auto& device : e.devices()) {
      a.devices.push_back(device.bdf());
      claim.requests.push_back(device.request());
    }
    if (auto first = s_.devices.find(a.devices.empty() ? "" : a.devices.front());
        first != s_.devices.end()) {
      a.resource = first->second.resource;
    }
    claim.reserved_for.assign(e.reserved_for().begin(), e.reserved_for().end());
    claim.pod_claim_name = e.pod_claim_name();
    a.claim = std::move(claim);
    s_.allocations[a.id] = std::move(a);
    NoteAllocationId(e.allocation_id());
  }

  void On(const events::ClaimPrepared& e) {
    Allocation* a = ClaimOf(e.allocation_id(), e.claim_uid(), "ClaimPrepared");
    if (!a) return;
    if (a->status != AllocationStatus::kGranted) {
      Anomaly("claim " + ClaimText(*a->claim) + " prepared while its allocation " + a->id + " is " +
              AllocationStatusName(a->status));
      return;
    }
    a->claim->prepared = true;
  }

  void On(const events::ClaimPrepareFailed& e) {
    if (ClaimOf(e.allocation_id(), e.claim_uid(), "ClaimPrepareFailed")) Finish(e.allocation_id());
  }

  void On(const events::ClaimUnprepareRequested& e) {
    Allocation* a = ClaimOf(e.allocation_id(), e.claim_uid(), "ClaimUnprepareRequested");
    if (!a) return;
    if (a->status == AllocationStatus::kRequested) {
      Anomaly("claim " + ClaimText(*a->claim) + " unprepared while its prepare is under way");
      return;
    }
    UnpreparingClaim unpreparing{a->id, *a->claim, a->devices, a->partition};
    Finish(e.allocation_id());
    s_.unpreparing_claims[e.claim_uid()] = std::move(unpreparing);
  }

  void On(const events::ClaimUnprepared& e) {
    auto it = s_.unpreparing_claims.find(e.claim_uid());
    if (it == s_.unpreparing_claims.end() || it->second.allocation_id != e.allocation_id()) {
      Anomaly("ClaimUnprepared for claim uid " + e.claim_uid() + " (" + e.allocation_id() +
              ") whose unprepare was not requested");
      return;
    }
    s_.unpreparing_claims.erase(it);
  }

  void On(const events::ResourceSlicePublished& e) {
    s_.resource_slice = {e.slice_name(), e.generation(), e.device_count(), e.devices_sha256()};
  }

 private:
  // The live allocation `id` of the claim `uid`; null and an anomaly when it is not that.
  Allocation* ClaimOf(const AllocationId& id, const std::string& uid, const char* event_name) {
    Allocation* a = LiveAllocation(id, event_name);
    if (a && (!a->claim || a->claim->uid != uid)) {
      Anomaly(std::string(event_name) + " for claim uid " + uid + ", but allocation " + id +
              " is not that claim's");
      return nullptr;
    }
    return a;
  }
};

}  // namespace

void ApplyClaimEvent(ApplyScope& scope, const events::Event& event) {
  ClaimApplier a(scope);
  switch (event.body_case()) {
    case events::Event::kClaimPrepareRequested:
      a.On(event.claim_prepare_requested());
      return;
    case events::Event::kClaimPrepared:
      a.On(event.claim_prepared());
      return;
    case events::Event::kClaimPrepareFailed:
      a.On(event.claim_prepare_failed());
      return;
    case events::Event::kClaimUnprepareRequested:
      a.On(event.claim_unprepare_requested());
      return;
    case events::Event::kClaimUnprepared:
      a.On(event.claim_unprepared());
      return;
    case events::Event::kResourceSlicePublished:
      a.On(event.resource_slice_published());
      return;
    default:
      a.Anomaly("not a claim event");
      return;
  }
}

}  // namespace gfp::sm
