#include "plugin/dra_mode/claim_reconciler.h"

#include <spdlog/spdlog.h>

#include "plugin/dra/claim_json.h"
#include "plugin/dra_mode/claim_facts.h"
#include "statemachine/claims.h"

namespace gfp::plugin::dra_mode {
namespace {

struct HeldClaim {
  sm::Claim claim;
  std::vector<sm::Bdf> devices;
};

// Every claim whose GPUs are granted, its files written or not: one whose files never got
// written (the write failed, or a power cut lost them and ClaimPrepared) holds its GPUs as well.
std::vector<HeldClaim> GrantedClaims(core::PluginCore& core) {
  return core.engine().Read([](const sm::State& s) {
    std::vector<HeldClaim> out;
    for (const auto& [id, a] : s.allocations) {
      if (a.claim && a.status == sm::AllocationStatus::kGranted) {
        out.push_back({*a.claim, a.devices});
      }
    }
    return out;
  });
}

}  // namespace

ClaimReconciler::ClaimReconciler(core::PluginCore& core, KubeApi& api, ClaimPreparer& preparer,
                                 std::chrono::milliseconds grace)
    : core_(core), api_(api), preparer_(preparer), grace_(grace) {}

std::optional<ClaimReconciler::Verdict> ClaimReconciler::Judge(const sm::Claim& claim,
                                                               const std::vector<sm::Bdf>& devices,
                                                               bool& definite) {
  using Reason = events::ClaimUnprepareRequested;
  definite = false;
  auto answer = api_.GetClaim(claim.namespace_name, claim.name);
  if (!answer.ok()) return std::nullopt;
  definite = true;
  if (!answer->has_value()) {
    return Verdict{Reason::REASON_CLAIM_GONE,
                   "the API server has no claim " + claim.namespace_name + "/" + claim.name};
  }
  const auto& settings = preparer_.settings();
  const dra::ClaimReading reading = dra::ReadClaim(
      **answer, {claim.uid, settings.driver, settings.node, DeviceNamesOfNode(core_.inventory())});
  switch (reading.problem) {
    case dra::ClaimProblem::kUidDiffers:
      return Verdict{Reason::REASON_UID_CHANGED, reading.reason};
    case dra::ClaimProblem::kNotAllocated:
    case dra::ClaimProblem::kOtherDevices:
      return Verdict{Reason::REASON_NOT_ALLOCATED_HERE, reading.reason};
    case dra::ClaimProblem::kMalformed:
      definite = false;  // an answer we cannot read says nothing about the claim
      return std::nullopt;
    case dra::ClaimProblem::kNone:
      break;
  }
  std::vector<sm::Bdf> now;
  for (const auto& d : reading.devices) now.push_back(d.bdf);
  if (now != devices) {
    return Verdict{Reason::REASON_NOT_ALLOCATED_HERE,
                   "claim " + claim.namespace_name + "/" + claim.name +
                       " is now allocated other GPUs than it was prepared with"};
  }
  return std::nullopt;
}

ClaimReconcileResult ClaimReconciler::Reconcile() {
  ClaimReconcileResult result;
  std::map<std::string, sm::Micros> still_bad;
  const sm::Micros grace = std::chrono::duration_cast<std::chrono::microseconds>(grace_).count();
  for (const HeldClaim& held : GrantedClaims(core_)) {
    ++result.checked;
    bool definite = false;
    const auto verdict = Judge(held.claim, held.devices, definite);
    if (!definite) {
      ++result.unreachable;
      if (auto it = bad_since_.find(held.claim.uid); it != bad_since_.end()) {
        still_bad.insert(*it);  // no answer keeps the clock as it was
      }
      continue;
    }
    if (!verdict) continue;
    const sm::Micros now = core_.Now();
    const sm::Micros since = bad_since_.count(held.claim.uid) ? bad_since_[held.claim.uid] : now;
    if (now - since < grace) {
      if (since == now) spdlog::info("{}; unpreparing it after the release grace", verdict->detail);
      still_bad[held.claim.uid] = since;
      ++result.waiting;
      continue;
    }
    const std::string error = preparer_.Unprepare(held.claim.uid, verdict->reason, verdict->detail);
    if (error.empty()) {
      spdlog::info("unprepared claim {}: {}", sm::ClaimText(held.claim), verdict->detail);
      ++result.unprepared;
    } else {
      spdlog::warn("cannot unprepare claim {}: {}", sm::ClaimText(held.claim), error);
      still_bad[held.claim.uid] = since;
      ++result.failed;
    }
  }
  bad_since_ = std::move(still_bad);
  return result;
}

}  // namespace gfp::plugin::dra_mode
