// What /healthz and /readyz answer (SPEC §8.1). The serve loop publishes; the HTTP threads only
// read what was published, so a probe never waits for FM, the journal or the loop itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace gfp::plugin::metrics {

struct ProbeAnswer {
  int status = 200;
  std::string body;  // one line, ending in '\n'
};

// What readiness depends on, gathered by the serve loop.
struct ReadinessInputs {
  // Device-plugin mode: every resource registered with kubelet.
  std::vector<std::string> unregistered_resources;  // not (yet) registered with kubelet
  // DRA mode (SPEC §11) instead: the DRA plugin registered with kubelet and the ResourceSlice
  // published once since the start (later API server outages do not count).
  bool dra_mode = false;
  bool dra_registered = false;
  bool slice_published = false;
  // Why the API server was last not usable (an outage, a refusal); empty while it is. Not
  // ready, but alive: the node's local work goes on (/healthz stays 200).
  std::string api_server_problem;
  bool fabric_manager_enabled = false;
  bool fabric_manager_usable = false;
  std::string fabric_manager_problem;   // why not usable (untrusted FM text is escaped here)
  std::uint64_t first_damaged_seq = 0;  // from the background verification; 0 = none found
  std::string journal_problem;          // the journal file deleted or replaced; empty: fine
};

// Empty when ready; otherwise one line saying why not (the first reason that applies).
std::string NotReadyReason(const ReadinessInputs& inputs);

class ProbeState {
 public:
  using Steady = std::chrono::steady_clock;

  // Healthy while the loop turned within 3 reconcile intervals.
  explicit ProbeState(std::chrono::milliseconds reconcile_interval, Steady::time_point now);

  void LoopTurned(Steady::time_point now);
  void SetNotReadyReason(std::string reason);  // empty: ready

  ProbeAnswer Healthz(Steady::time_point now) const;
  ProbeAnswer Readyz() const;

 private:
  const std::chrono::milliseconds stale_after_;
  std::atomic<Steady::rep> last_turn_;
  mutable std::mutex mu_;
  std::string not_ready_ = "the plugin is starting";
};

}  // namespace gfp::plugin::metrics
