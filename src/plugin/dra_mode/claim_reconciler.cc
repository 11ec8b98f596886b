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

ClaimReconciler::Judgement ClaimReconciler::Judge(const sm::Claim& claim,
                                                  const std::vector<sm::Bdf>& devices) {
  using Reason = events::ClaimUnprepareRequested;
  auto answer = api_.GetClaim(claim.namespace_name, claim.name, std::nullopt);
  if (!answer.ok()) return {};
  if (!answer->has_value()) {
    return {true, Verdict{Reason::REASON_CLAIM_GONE, "the API server has no claim " +
                                                         claim.namespace_name + "/" + claim.name}};
  }
  const auto& settings = preparer_.settings();
  const dra::ClaimReading reading = dra::ReadClaim(
      **answer, {claim.uid, settings.driver, settings.node, DeviceNamesOfNode(core_.inventory())});
  // An answer about another object, or one we cannot read, says nothing about this claim.
  if (reading.namespace_name != claim.namespace_name || reading.name != claim.name) return {};
  switch (reading.problem) {
    case dra::ClaimProblem::kUidDiffers:
      return {true, Verdict{Reason::REASON_UID_CHANGED, reading.reason}};
    case dra::ClaimProblem::kNotAllocated:
    case dra::ClaimProblem::kOtherDevices:
      return {true, Verdict{Reason::REASON_NOT_ALLOCATED_HERE, reading.reason}};
    case dra::ClaimProblem::kMalformed:
      return {};
    case dra::ClaimProblem::kNone:
      break;
  }
  std::vector<sm::Bdf> now;
  for (const auto& d : reading.devices) now.push_back(d.bdf);
  if (now != devices) {
    return {true, Verdict{Reason::REASON_NOT_ALLOCATED_HERE,
                          "claim " + claim.namespace_name + "/" + claim.name +
                              " is now allocated other GPUs than it was prepared with"}};
  }
  return {true, std::nullopt};
}

ClaimReconcileResult ClaimReconciler::Reconcile() {
  ClaimReconcileResult result;
  const std::vector<HeldClaim> held_claims = GrantedClaims(core_);
  std::vector<Judgement> judgements;
  int gone = 0;
  for (const HeldClaim& held : held_claims) {
    ++result.checked;
    const Judgement& j = judgements.emplace_back(Judge(held.claim, held.devices));
    if (!j.definite) ++result.unreachable;
    if (j.verdict && j.verdict->reason == events::ClaimUnprepareRequested::REASON_CLAIM_GONE) {
      ++gone;
    }
  }
  // Every claim gone at once, more than one of them, is no definite answer for any: a
  // kubeconfig that points at another cluster, or a server that lost its data, says so too.
  if (gone > 1 && gone == result.checked) {
    spdlog::warn(
        "the API server has none of the {} prepared claims; taking that for a wrong cluster or "
        "a server without its data, not for {} deleted claims: nothing is unprepared",
        gone, gone);
    result.unreachable = result.checked;
    for (Judgement& j : judgements) j = {};
  }
  std::map<std::string, sm::Micros> still_bad;
  for (std::size_t i = 0; i < held_claims.size(); ++i) {
    Act(held_claims[i].claim, judgements[i], still_bad, result);
  }
  bad_since_ = std::move(still_bad);
  return result;
}

void ClaimReconciler::Act(const sm::Claim& claim, const Judgement& judgement,
                          std::map<std::string, sm::Micros>& still_bad,
                          ClaimReconcileResult& result) {
  if (!judgement.definite) {
    // No definite answer keeps the clock as it was.
    if (auto it = bad_since_.find(claim.uid); it != bad_since_.end()) still_bad.insert(*it);
    return;
  }
  if (!judgement.verdict) return;
  const Verdict& verdict = *judgement.verdict;
  const sm::Micros grace = std::chrono::duration_cast<std::chrono::microseconds>(grace_).count();
  const sm::Micros now = core_.Now();
  const sm::Micros since = bad_since_.count(claim.uid) ? bad_since_[claim.uid] : now;
  if (now - since < grace) {
    if (since == now) spdlog::info("{}; unpreparing it after the release grace", verdict.detail);
    still_bad[claim.uid] = since;
    ++result.waiting;
    return;
  }
  const std::string error = preparer_.Unprepare(claim.uid, verdict.reason, verdict.detail);
  if (error.empty()) {
    spdlog::info("unprepared claim {}: {}", sm::ClaimText(claim), verdict.detail);
    ++result.unprepared;
  } else {
    spdlog::warn("cannot unprepare claim {}: {}", sm::ClaimText(claim), error);
    still_bad[claim.uid] = since;
    ++result.failed;
  }
}

// A claim whose unprepare started (kubelet's, or ours) and did not finish (FM refused the
// deactivation, a file could not go) is driven on from here: kubelet may never retry it (its
// checkpoint lost, the pod force-deleted). No API call: the journal says it is to end.
ClaimReconcileResult ClaimReconciler::FinishUnprepares() {
  ClaimReconcileResult result;
  const auto unfinished = core_.engine().Read([](const sm::State& s) {
    std::vector<std::string> uids;
    for (const auto& [uid, c] : s.unpreparing_claims) uids.push_back(uid);
    return uids;
  });
  std::map<std::string, std::string> still_failing;
  for (const std::string& uid : unfinished) {
    const std::string error = preparer_.Unprepare(uid);
    if (error.empty()) {
      spdlog::info("finished the unprepare of claim uid {}", uid);
      ++result.unprepared;
      continue;
    }
    ++result.failed;
    // Said once per claim and reason: FM down would otherwise repeat it every pass.
    auto last = unfinished_errors_.find(uid);
    if (last == unfinished_errors_.end() || last->second != error) {
      spdlog::warn("cannot finish the unprepare of claim uid {}: {} (retried every pass)", uid,
                   error);
    }
    still_failing[uid] = error;
  }
  unfinished_errors_ = std::move(still_failing);
  return result;
}

}  // namespace gfp::plugin::dra_mode
