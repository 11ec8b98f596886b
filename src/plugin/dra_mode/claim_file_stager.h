// The thread that stages first Prepares' files (dra::StagedClaimFiles) while their sagas commit:
// one long-lived worker rather than a thread per Prepare (a thread's start and end cost more
// than the hand-off). Stage hands a claim over and returns at once; the staged files (null
// when they could not be staged: they are then written in place) come back through
// StagedFiles, which also waits for them, and removes them unless published, however the
// Prepare ends. With an InodeReserve, the thread also makes the next Prepare's folders and files
// ahead, once no staging has been asked for kQuietBeforeRefill: normally after a Prepare has
// answered, though a Prepare that outlasts the quiet (a slow disk, a sanitizer build) sees a
// refill start before it ends; a staging asked for during a refill stops it after the inode at
// hand.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "plugin/dra/claim_file_staging.h"

namespace gfp::plugin::dra_mode {

class StagedFiles {
 public:
  StagedFiles() = default;
  explicit StagedFiles(std::future<std::unique_ptr<dra::StagedClaimFiles>> staged)
      : staged_(std::move(staged)) {}
  StagedFiles(StagedFiles&&) = default;
  StagedFiles& operator=(StagedFiles&&) = default;
  ~StagedFiles() { (void)Take(); }  // waits: nothing is left staging behind the Prepare

  // The staged files once staging ended (null when nothing was staged); once.
  std::unique_ptr<dra::StagedClaimFiles> Take() {
    return staged_.valid() ? staged_.get() : nullptr;
  }

 private:
  std::future<std::unique_ptr<dra::StagedClaimFiles>> staged_;
};

class ClaimFileStager {
 public:
  // The reserve (may be null) is refilled once when the thread starts, then after each staging.
  explicit ClaimFileStager(std::unique_ptr<dra::InodeReserve> reserve = nullptr);
  ~ClaimFileStager();  // stages what was handed over, then ends the thread

  static constexpr std::chrono::milliseconds kQuietBeforeRefill{5};
  ClaimFileStager(const ClaimFileStager&) = delete;
  ClaimFileStager& operator=(const ClaimFileStager&) = delete;

  StagedFiles Stage(dra::ClaimFileDirs dirs, dra::PreparedClaim claim);

 private:
  void Run();
  // Refills the reserve once the thread has had nothing to stage for kQuietBeforeRefill; false
  // when staging was asked for first (or the thread is stopping). Called with mu_ held.
  bool RefillWhenQuiet(std::unique_lock<std::mutex>& lock);

  std::unique_ptr<dra::InodeReserve> reserve_;  // the thread's alone
  std::atomic<bool> asked_{false};  // staging or stopping asked for: a refill gives way at once
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<std::unique_ptr<dra::StagedClaimFiles>()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace gfp::plugin::dra_mode
