#include "plugin/metrics/probe_state.h"

#include "common/text_escape.h"

namespace gfp::plugin::metrics {
namespace {

constexpr std::size_t kMaxReasonText = 512;

}  // namespace

std::string NotReadyReason(const ReadinessInputs& inputs) {
  if (!inputs.journal_problem.empty()) {
    return EscapeAndTruncate(inputs.journal_problem, kMaxReasonText);
  }
  if (inputs.first_damaged_seq != 0) {
    return "the background verification found journal damage at seq " +
           std::to_string(inputs.first_damaged_seq);
  }
  if (inputs.fabric_manager_enabled && !inputs.fabric_manager_usable) {
    return "Fabric Manager is not usable (" +
           EscapeAndTruncate(inputs.fabric_manager_problem, kMaxReasonText) + ")";
  }
  if (inputs.dra_mode) {
    if (!inputs.dra_registered) return "the DRA plugin is not registered with kubelet yet";
    if (!inputs.slice_published) return "the ResourceSlice was not published yet";
    if (!inputs.api_server_problem.empty()) {
      return "the API server is not usable (" +
             EscapeAndTruncate(inputs.api_server_problem, kMaxReasonText) + ")";
    }
    return "";
  }
  if (!inputs.unregistered_resources.empty()) {
    std::string names;
    for (const auto& r : inputs.unregistered_resources) {
      names += (names.empty() ? "" : ", ") + EscapeAndTruncate(r, kMaxReasonText);
    }
    return "not registered with kubelet yet: " + names;
  }
  return "";
}

ProbeState::ProbeState(std::chrono::milliseconds reconcile_interval, Steady::time_point now)
    : stale_after_(3 * reconcile_interval), last_turn_(now.time_since_epoch().count()) {}

void ProbeState::LoopTurned(Steady::time_point now) {
  last_turn_.store(now.time_since_epoch().count());
}

void ProbeState::SetNotReadyReason(std::string reason) {
  std::lock_guard lock(mu_);
  not_ready_ = std::move(reason);
}

ProbeAnswer ProbeState::Healthz(Steady::time_point now) const {
  const Steady::time_point last{Steady::duration(last_turn_.load())};
  const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(now - last);
  if (since <= stale_after_) return {200, "ok\n"};
  return {503, "the serve loop last turned " + std::to_string(since.count()) +
                   " ms ago (more than 3 reconcile intervals, " +
                   std::to_string(stale_after_.count()) + " ms)\n"};
}

ProbeAnswer ProbeState::Readyz() const {
  std::lock_guard lock(mu_);
  if (not_ready_.empty()) return {200, "ready\n"};
  return {503, "not ready: " + not_ready_ + "\n"};
}

}  // namespace gfp::plugin::metrics
