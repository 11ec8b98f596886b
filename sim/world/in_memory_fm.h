// Fabric Manager as an in-memory daemon, for the deterministic simulation: the FM model of
// sim/fm/fabric_model over a MemoryStateStore, driven with the same FmSimControl API as the C ABI
// simulator, and reached by the plugin's core through InMemoryFabricPort (in_memory_port.h)
// instead of dlopen. No file, no lock, no thread, no clock: what a call does depends only on
// the state and the order of calls, so a seed reproduces a run byte for byte.
//
// Faults keep their C ABI meaning, with time taken out:
//  - InjectFailure, LoseReply, Restart, DropConnections, SetUnreachable, Degrade, drift: as there.
//  - DelayNext(function, ms): the next call of `function` does not answer within the caller's
//    deadline. It is not carried out yet (a late call); the caller gets FM_ST_TIMEOUT, and calls
//    made before it completes are "not attempted", as with the SDK client's worker.
//    CompleteLateCalls() carries late calls out, in order, on FM's state at that moment.
//  - CrashCaller(function, point): the plugin process dies there: before FM carries the call
//    out, or after (logged, state changed). ProcessDied is thrown out of the port through the
//    core; the world catches it and drops the core without any shutdown step.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/fm/fabric_model.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/fm/fm_state_store.h"

namespace gfp::simworld {

// The plugin process died inside a Fabric Manager call (a CrashCaller fault).
struct ProcessDied {
  std::string function;
  fmsim::CrashPoint point = fmsim::CrashPoint::kBefore;
};

// One SDK call as the port makes it.
struct FmCall {
  const char* function = "";
  std::string args;              // as the call log records it
  std::vector<std::string> vfs;  // fmActivateFabricPartitionWithVFs only
  // The generation of the caller's connection; nullopt for fmConnect (no handle yet).
  std::optional<std::uint64_t> handle_generation;
  std::function<int(fmsim::FabricCall&)> body;  // the daemon's side (fabric_model.h)
};

struct FmCallOutcome {
  int code = 0;
  std::optional<std::uint64_t> late_id;  // set: not answered in time, not carried out yet
};

class InMemoryFm {
 public:
  // A fresh FM (running, nothing active) with table "h100", "b200", "a100" or "hgx2".
  static Result<std::unique_ptr<InMemoryFm>> Create(std::string_view table);

  // The control API tests also use on libnvfm-sim.so.
  fmsim::FmSimControl& control() { return control_; }
  const fmsim::SimState& state() const { return store_->state(); }

  // Serves one call. Throws ProcessDied at an armed CrashCaller point. `caller` numbers the
  // plugin process (the call log's pid).
  FmCallOutcome Serve(const FmCall& call, int caller);

  // Late calls (DelayNext) not carried out yet.
  int LateCallsInFlight() const { return static_cast<int>(late_.size()); }
  bool IsLate(std::uint64_t id) const;
  // Carries out every late call, oldest first (their callers gave up on them long ago).
  void CompleteLateCalls();

 private:
  struct LateCall {
    std::uint64_t id;
    FmCall call;
    int caller;
  };
  explicit InMemoryFm(std::shared_ptr<fmsim::MemoryStateStore> store);
  // The call reaches the daemon: handle check, the model, a lost reply, the call log.
  int CarryOut(const FmCall& call, int caller, bool may_crash);

  std::shared_ptr<fmsim::MemoryStateStore> store_;
  fmsim::FmSimControl control_;
  std::deque<LateCall> late_;
  std::uint64_t next_late_id_ = 1;
};

}  // namespace gfp::simworld
