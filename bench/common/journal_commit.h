// What one of serve's own journal commits costs beside the floor's single-row commit: the
// intent an isolated Allocate journals first (AllocationRequested + PartitionActivationRequested,
// with their index rows), appended through store::Journal in the same directory.
#pragma once

#include <filesystem>
#include <memory>

namespace gfp::store {
class Journal;
}

namespace gfp::bench {

class JournalCommit {
 public:
  // Creates the journal at `path` (dies when it cannot).
  explicit JournalCommit(const std::filesystem::path& path);
  ~JournalCommit();
  JournalCommit(const JournalCommit&) = delete;
  JournalCommit& operator=(const JournalCommit&) = delete;

  // Appends one intent (a new allocation id each time) durably; its latency in microseconds.
  double One();

 private:
  std::unique_ptr<store::Journal> journal_;
  int next_ = 0;
};

}  // namespace gfp::bench
