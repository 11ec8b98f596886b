// Follows the journal a serve process writes (read-only: a WAL reader never blocks the writer)
// and keeps the state it describes, so a benchmark can wait for what the plugin did (a release,
// a deactivation) without a kubelet call that would say it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "statemachine/state.h"

namespace gfp::store {
class Journal;
}  // namespace gfp::store

namespace gfp::bench {

class JournalFollower {
 public:
  // Opens the journal and replays it (dies when it cannot).
  explicit JournalFollower(const std::filesystem::path& path);
  ~JournalFollower();
  JournalFollower(const JournalFollower&) = delete;
  JournalFollower& operator=(const JournalFollower&) = delete;

  // Reads and applies the events appended since the last call; returns their times.
  std::vector<std::int64_t> Poll();

  // Waits until nothing is allocated, active or intended any more (the plugin's reconciliation
  // released and deactivated it); false when `timeout` passed first.
  bool WaitUntilReleased(std::chrono::milliseconds timeout);

  // Partitions of the journal's FM table with 1 and 2 GPUs, as device ids (dies without them).
  void PartitionsBySize(std::vector<std::vector<std::string>>& ones,
                        std::vector<std::vector<std::string>>& twos) const;

  const sm::State& state() const { return state_; }

 private:
  std::unique_ptr<store::Journal> journal_;
  sm::State state_;
};

}  // namespace gfp::bench
