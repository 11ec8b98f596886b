// The journaled state machine: the journal on disk plus the state rebuilt from it, and the one
// way to change both — decide, journal (one durable transaction), then apply. Recovery on open
// is the newest valid snapshot plus the tail of the journal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/commands.h"
#include "statemachine/decide.h"
#include "statemachine/state.h"
#include "store/journal.h"

namespace gfp::engine {

struct EngineOptions {
  // A snapshot is written after this many events since the previous one.
  std::uint64_t snapshot_every = 10'000;
  // Snapshots kept on disk (older ones are pruned).
  std::uint64_t snapshots_kept = 3;
};

struct RecoveryReport {
  std::uint64_t snapshot_seq = 0;     // 0 when replayed from seq 1
  std::uint64_t events_replayed = 0;  // after the snapshot
  std::vector<std::string> skipped_snapshots;
  double milliseconds = 0;
};

// Rebuilds the state from `journal` up to `to_seq` (0 = all). With `use_snapshots`, starts from
// the newest valid snapshot at or below to_seq. With `check_invariants`, checks them after every
// event and fails naming the seq. Undecodable events fail with DataLoss naming the seq.
Result<sm::State> Replay(const store::Journal& journal, std::uint64_t to_seq, bool use_snapshots,
                         bool check_invariants, RecoveryReport* report = nullptr);

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Open(const std::filesystem::path& path,
                                              EngineOptions options = {});

  // Decides on `command`; when it yields events, journals them in one transaction and applies
  // them. If journaling fails the state is unchanged and the failure is returned.
  Result<sm::Decision> Execute(const sm::Command& command);

  // Calls fn with the current state under the engine's lock (keep it short).
  template <typename Fn>
  auto Read(Fn&& fn) const {
    std::lock_guard lock(mu_);
    return fn(state_);
  }
  sm::State CopyState() const;

  const RecoveryReport& recovery() const { return recovery_; }
  store::Journal& journal() { return *journal_; }

  // Writes a snapshot now (also done automatically every options.snapshot_every events).
  Status Snapshot();

 private:
  Engine(std::unique_ptr<store::Journal> journal, sm::State state, EngineOptions options,
         RecoveryReport recovery);
  Status SnapshotLocked();

  mutable std::mutex mu_;
  std::unique_ptr<store::Journal> journal_;
  sm::State state_;
  EngineOptions options_;
  RecoveryReport recovery_;
  std::uint64_t last_snapshot_seq_ = 0;
};

}  // namespace gfp::engine
