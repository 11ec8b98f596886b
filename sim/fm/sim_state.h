// The simulated Fabric Manager's state. FM is a separate daemon, so this state lives in a file
// (path from $NVFM_SIM_STATE) that every SDK call and every control call reads and rewrites under
// an exclusive flock; it survives the plugin process. The call log sits next to it in
// "<state>.calls" (JSON lines) so the state file stays small and each call stays cheap. With
// $NVFM_SIM_PRIVATE=1 the library reads it once and keeps the state in memory (nvfm_sim.cc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/fm/sim_types.h"

namespace gfp::fmsim {

struct Fault {
  int code = 0;
  int remaining = 1;  // kAlways = every call
};

// The call is carried out, then the caller gets `code` instead of FM_ST_SUCCESS.
struct LostReply {
  int code = 0;
  int remaining = 1;
};

// The calling process _exit()s with kCrashExitCode at `point` of the call.
struct CallerCrash {
  CrashPoint point = CrashPoint::kBefore;
  int remaining = 1;
  int only_pid = 0;  // 0: any process; else only that process crashes
};

// A one-shot delay (unlike latency_ms, which applies to every call).
struct Delay {
  int ms = 0;
  int remaining = 1;
};

struct SimState {
  std::string table = "h100";
  Mode mode = Mode::kRunning;
  FabricMode fabric_mode = FabricMode::kSharedNvswitch;
  // Bumped whenever FM "loses" its connections; a handle made in an older generation is stale.
  std::uint64_t generation = 1;
  bool unreachable = false;
  bool only_v1_connect = false;
  HostileReply hostile = HostileReply::kNone;
  std::vector<std::uint32_t> active;  // sorted
  // vGPU mode: what FM learns from PCI, i.e. which GPU (physical id) each SR-IOV VF belongs to.
  std::map<std::string, std::uint32_t> vf_parents;  // canonical VF BDF -> parent physical id
  // vGPU mode: the VF list of each active partition's activation, in the order it was passed.
  std::map<std::uint32_t, std::vector<std::string>> active_vfs;
  std::map<std::uint32_t, std::uint32_t> degraded;  // partition id -> NVLinks available
  std::map<std::string, Fault> faults;              // SDK function name -> fault
  std::map<std::string, int> latency_ms;            // SDK function name or "*" -> delay
  std::map<std::string, LostReply> lost_replies;    // SDK function name -> lost reply
  std::map<std::string, CallerCrash> crashes;       // SDK function name -> caller crash
  std::map<std::string, Delay> delays;              // SDK function name -> one-shot delay
  // The pid of each call sleeping a one-shot delay that has not returned yet (a process that
  // died meanwhile never removes its entry; DelayedCallsInFlight skips dead processes).
  std::vector<int> delayed_pids;
  std::uint64_t call_log_lines = 0;
};

inline constexpr std::size_t kCallLogLimit = 10000;

// An exclusively locked, loaded state. Changes are written by Commit(); the lock is released
// when the object goes away.
class LockedState {
 public:
  static Result<LockedState> Acquire(const std::string& path);
  // Takes the lock and replaces whatever is there with `initial` and an empty call log.
  static Status Initialise(const std::string& path, const SimState& initial);

  LockedState(LockedState&& other) noexcept;
  LockedState& operator=(LockedState&&) = delete;
  ~LockedState();

  SimState& state() { return state_; }
  void AppendCall(CallRecord record) { pending_calls_.push_back(std::move(record)); }
  Status Commit();

  Result<std::vector<CallRecord>> ReadCallLog() const;
  Status ClearCallLog();

 private:
  LockedState(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  Status Load();

  std::string path_;
  int lock_fd_ = -1;
  SimState state_;
  std::vector<CallRecord> pending_calls_;
};

}  // namespace gfp::fmsim
