// A seeded workload for the storage-fault sweeps: the real PluginCore (real engine and SQLite
// journal, through the fault VFS) on a simulated HGX H100 with the simulated Fabric Manager,
// driven as kubelet and an operator would: allocation (GPA, Allocate, PreStart), release (pod
// gone, release grace, reconcile), FM drift (partitions activated or deactivated behind the
// plugin), FM restarts, snapshots and clean plugin restarts. The same seed is the same sequence
// of calls, so a run can be replayed with a power cut or an I/O error at any I/O point.
//
// It records what was acknowledged: every answer returned to its caller (a grant, a refusal, a
// release seen by a reconcile) with the journal seq it stood on, and the engine's state after the
// last call that returned (the engine applies events only after their append committed, so that
// state is exactly what was acknowledged as durable).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/world/deterministic_world.h"
#include "statemachine/state.h"

namespace gfp::faulttest {

struct Acknowledged {
  enum class Kind { kGrant, kRefusal, kRelease };
  Kind kind;
  std::uint64_t seq = 0;  // the journal's last seq when the answer was returned
  std::string what;       // "grant [bdfs]", "release <allocation id>", ...
  int step = 0;
};
const char* KindName(Acknowledged::Kind kind);

// What a call the workload made returned, for the I/O-error checks.
struct CallResult {
  std::string call;  // "StartPlugin", "Allocate", "PreStart", "Snapshot"
  Status status;
  bool fault_fired = false;  // an injected I/O fault fired during this call
};

class Workload {
 public:
  static constexpr int kDefaultSteps = 14;
  Workload(std::uint64_t seed, std::filesystem::path dir, int steps = kDefaultSteps);

  // Runs the steps until the end or until the power is off after a step. after_step (may be
  // empty) is called after each step with the calls it made.
  Status Run(const std::function<void(const std::vector<CallResult>&)>& after_step = {});

  simworld::DeterministicWorld& world() { return *world_; }
  const std::vector<Acknowledged>& acknowledged() const { return acked_; }
  const sm::State& acknowledged_state() const { return acked_state_; }
  // The pods kubelet knows, as PodResources reports them.
  std::vector<adapters::kubelet::ContainerDeviceAssignment> PodResources() const;
  // Where the workload is: "step 5 (admit vm-3 (2 GPUs))".
  std::string Where() const;
  int step() const { return at_step_; }

 private:
  struct Vm {
    std::string name;
    std::vector<std::string> devices;
  };
  void Step();
  void Admit();
  void DeleteAndRelease();
  void ReconcileTick();
  void Drift();
  void FmRestart();
  void TakeSnapshot();
  void RestartPlugin();
  void StartPlugin(const char* why);
  void Note(const std::string& call, const Status& status);
  void Acknowledge(Acknowledged::Kind kind, const std::string& what);
  void RecordState();
  bool up() const { return world_ && world_->plugin_up(); }

  std::filesystem::path dir_;
  int steps_;
  std::uint64_t rng_state_;
  std::uint64_t Next();
  std::uint64_t Below(std::uint64_t n) { return Next() % n; }

  std::unique_ptr<simworld::DeterministicWorld> world_;
  int step_ = 0;
  int at_step_ = 0;  // the step running or last run
  std::string step_name_ = "create the world";
  int next_vm_ = 1;
  std::vector<Vm> vms_;
  std::vector<CallResult> calls_;
  std::uint64_t faults_seen_ = 0;  // testing::fault::FaultsFired() after the last call
  std::vector<Acknowledged> acked_;
  sm::State acked_state_;
};

}  // namespace gfp::faulttest
