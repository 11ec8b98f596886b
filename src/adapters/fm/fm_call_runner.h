// Runs Fabric Manager calls on one dedicated worker thread so that a caller can give up on a call
// that does not return in time. The SDK call itself cannot be cancelled: it keeps running on the
// worker, and until it returns the runner refuses new work (the caller fails fast instead of
// queueing behind a hung daemon).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace gfp::adapters::fm {

class FmCallRunner {
 public:
  enum class Outcome {
    kCompleted,  // the call returned; `code` is its FM return code
    kTimedOut,   // the deadline passed; the call is still running on the worker
    kBusy,       // an earlier call that timed out has not returned yet; nothing was run
  };
  struct RunResult {
    Outcome outcome;
    int code;
  };

  // `shutdown_grace`: how long the destructor waits for a hung call before abandoning the
  // worker thread (it is detached and exits when the call returns; whatever the call uses must
  // be owned by the call itself, e.g. by captured shared_ptrs).
  explicit FmCallRunner(std::chrono::milliseconds shutdown_grace);
  ~FmCallRunner();
  FmCallRunner(const FmCallRunner&) = delete;
  FmCallRunner& operator=(const FmCallRunner&) = delete;

  // Not thread-safe with itself: the client serialises calls.
  RunResult Run(std::function<int()> call, std::chrono::milliseconds deadline);

  // True while a call that timed out is still running.
  bool HasHungCall() const;

 private:
  struct Shared;
  static void WorkerLoop(const std::shared_ptr<Shared>& shared);

  std::shared_ptr<Shared> shared_;
  std::chrono::milliseconds shutdown_grace_;
  std::thread worker_;
};

}  // namespace gfp::adapters::fm
