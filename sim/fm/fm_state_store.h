// Where the simulated Fabric Manager's state lives. FM is a separate daemon: for the C ABI
// library (and every process that loads it) the state is a file under an flock (FileStateStore,
// sim_state.h); for the deterministic simulation, which runs the plugin's core in one process on
// one thread, it is plain memory (MemoryStateStore). FmSimControl works on either, so a scenario
// drives both Fabric Managers with the same control API.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/fm/sim_state.h"
#include "sim/fm/sim_types.h"

namespace gfp::fmsim {

class FmStateStore {
 public:
  virtual ~FmStateStore() = default;
  // Runs `change` on the state and keeps what it did when it returns OK.
  virtual Status Update(const std::function<Status(SimState&)>& change) = 0;
  virtual Result<SimState> Read() const = 0;
  virtual Result<std::vector<CallRecord>> CallLog() const = 0;
  virtual Status ClearCallLog() = 0;
};

// The state file of libnvfm-sim.so ($NVFM_SIM_STATE), each access under its lock.
class FileStateStore final : public FmStateStore {
 public:
  explicit FileStateStore(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  Status Update(const std::function<Status(SimState&)>& change) override;
  Result<SimState> Read() const override;
  Result<std::vector<CallRecord>> CallLog() const override;
  Status ClearCallLog() override;

 private:
  std::string path_;
};

// The state in memory, for one process and one thread; the call log keeps the last
// kCallLogLimit calls like the file's.
class MemoryStateStore final : public FmStateStore {
 public:
  explicit MemoryStateStore(SimState initial) : state_(std::move(initial)) {}

  Status Update(const std::function<Status(SimState&)>& change) override;
  Result<SimState> Read() const override { return state_; }
  Result<std::vector<CallRecord>> CallLog() const override { return calls_; }
  Status ClearCallLog() override;

  // For the in-memory FM's calls: the state itself, and a call to log.
  SimState& state() { return state_; }
  void AppendCall(CallRecord record);

 private:
  SimState state_;
  std::vector<CallRecord> calls_;
};

}  // namespace gfp::fmsim
