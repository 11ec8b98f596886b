#include "adapters/fm/fm_call_runner.h"

#include <spdlog/spdlog.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gfp::adapters::fm {

// Lives as long as the worker thread, which may outlive the runner after a hung call. Each side
// notifies after unlocking, on the other side's own condition variable: the woken thread then
// finds the mutex free instead of waking only to block on it (an isolated Allocate's FM call
// costs two futex wake-ups this way, not six).
struct FmCallRunner::Shared {
  std::mutex mu;
  std::condition_variable job_cv;   // the worker waits for a job or stop
  std::condition_variable done_cv;  // Run and the destructor wait for the job's end or the exit
  std::function<int()> job;
  bool has_job = false;
  bool busy = false;  // a job was handed over and has not returned yet
  bool stop = false;
  bool exited = false;
  std::uint64_t submitted = 0;
  std::uint64_t finished = 0;
  int last_code = 0;
};

FmCallRunner::FmCallRunner(std::chrono::milliseconds shutdown_grace)
    : shared_(std::make_shared<Shared>()), shutdown_grace_(shutdown_grace) {
  worker_ = std::thread([shared = shared_] { WorkerLoop(shared); });
}

FmCallRunner::~FmCallRunner() {
  std::unique_lock lock(shared_->mu);
  shared_->stop = true;
  lock.unlock();
  shared_->job_cv.notify_one();
  lock.lock();
  bool exited =
      shared_->done_cv.wait_for(lock, shutdown_grace_, [this] { return shared_->exited; });
  lock.unlock();
  if (exited) {
    worker_.join();
  } else {
    // The call is stuck inside the library; joining would hang shutdown forever.
    spdlog::warn("abandoning a Fabric Manager call that has not returned after shutdown");
    worker_.detach();
  }
}

void FmCallRunner::WorkerLoop(const std::shared_ptr<Shared>& shared) {
  std::unique_lock lock(shared->mu);
  while (true) {
    shared->job_cv.wait(lock, [&] { return shared->has_job || shared->stop; });
    if (!shared->has_job) break;  // stop requested and nothing to run
    std::function<int()> job = std::move(shared->job);
    shared->has_job = false;
    std::uint64_t id = shared->submitted;
    lock.unlock();
    int code = job();
    job = nullptr;  // release what the call captured before reporting completion
    lock.lock();
    shared->last_code = code;
    shared->finished = id;
    shared->busy = false;
    lock.unlock();
    shared->done_cv.notify_all();
    lock.lock();
  }
  shared->exited = true;
  lock.unlock();
  shared->done_cv.notify_all();
}

FmCallRunner::RunResult FmCallRunner::Run(std::function<int()> call,
                                          std::chrono::milliseconds deadline) {
  std::unique_lock lock(shared_->mu);
  if (shared_->busy) return {Outcome::kBusy, 0};
  shared_->job = std::move(call);
  shared_->has_job = true;
  shared_->busy = true;
  const std::uint64_t id = ++shared_->submitted;
  lock.unlock();
  shared_->job_cv.notify_one();
  lock.lock();
  bool done = shared_->done_cv.wait_for(lock, deadline, [&] { return shared_->finished >= id; });
  if (!done) return {Outcome::kTimedOut, 0};
  return {Outcome::kCompleted, shared_->last_code};
}

bool FmCallRunner::HasHungCall() const {
  std::lock_guard lock(shared_->mu);
  return shared_->busy;
}

}  // namespace gfp::adapters::fm
