// Start-up and periodic reconciliation of prepared claims against the API server (SPEC §11
// "Restart and reconciliation"): kubelet's own Unprepare can be lost with its checkpoint, so each
// prepared claim (and each one granted whose files are still to be written) is fetched, and one
// that is gone, has another uid, or no longer names the GPUs it was prepared with is unprepared
// (journaled with that reason) once it has stayed so for the release grace. Only a definite answer
// counts: an unreachable or refusing API server, or an answer that cannot be read, unprepares
// nothing and restarts no clock; nor does a 404 for every one of two or more claims at once (a
// kubeconfig of another cluster). A claim left unpreparing (its unprepare failed once and
// kubelet did not retry) is driven to its end here too.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plugin/dra_mode/claim_preparer.h"

namespace gfp::plugin::dra_mode {

struct ClaimReconcileResult {
  int checked = 0;
  int unreachable = 0;  // no definite answer
  int waiting = 0;      // found gone or changed, still within the grace
  int unprepared = 0;
  int failed = 0;  // an unprepare that did not finish (FM refused, a file could not go)
};

class ClaimReconciler {
 public:
  ClaimReconciler(core::PluginCore& core, KubeApi& api, ClaimPreparer& preparer,
                  std::chrono::milliseconds grace);

  // One check of every prepared claim with the API server (the API thread).
  ClaimReconcileResult Reconcile();
  // Drives every claim left unpreparing (deactivating, remove-files) to its end: its unprepare
  // failed once and kubelet may never retry it (its checkpoint lost, the pod force-deleted).
  // No API call, so the serve loop runs it; safe beside Reconcile (the core serialises both).
  ClaimReconcileResult FinishUnprepares();

 private:
  struct Verdict {
    events::ClaimUnprepareRequested::Reason reason;
    std::string detail;
  };
  // What one GET says: no definite answer, or definite with why the claim is no longer this
  // node's to keep prepared (no verdict while it still is).
  struct Judgement {
    bool definite = false;
    std::optional<Verdict> verdict;
  };
  Judgement Judge(const sm::Claim& claim, const std::vector<sm::Bdf>& devices);
  // Unprepares a claim whose verdict has stood for the grace; keeps its clock in `still_bad`.
  void Act(const sm::Claim& claim, const Judgement& judgement,
           std::map<std::string, sm::Micros>& still_bad, ClaimReconcileResult& result);

  core::PluginCore& core_;
  KubeApi& api_;
  ClaimPreparer& preparer_;
  const std::chrono::milliseconds grace_;
  std::map<std::string, sm::Micros> bad_since_;  // claim uid -> first seen gone or changed
  // FinishUnprepares' own (the serve loop's): claim uid -> the last error it logged.
  std::map<std::string, std::string> unfinished_errors_;
};

}  // namespace gfp::plugin::dra_mode
