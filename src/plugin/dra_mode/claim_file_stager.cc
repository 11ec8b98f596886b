#include "plugin/dra_mode/claim_file_stager.h"

#include <spdlog/spdlog.h>

namespace gfp::plugin::dra_mode {

ClaimFileStager::ClaimFileStager(std::unique_ptr<dra::InodeReserve> reserve)
    : reserve_(std::move(reserve)), thread_([this] { Run(); }) {}

ClaimFileStager::~ClaimFileStager() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    asked_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

StagedFiles ClaimFileStager::Stage(dra::ClaimFileDirs dirs, dra::PreparedClaim claim) {
  std::packaged_task<std::unique_ptr<dra::StagedClaimFiles>()> task(
      [this, dirs = std::move(dirs), claim = std::move(claim)]() mutable {
        auto staged = dra::StagedClaimFiles::Stage(dirs, std::move(claim), reserve_.get());
        if (staged.ok()) return std::move(staged).value();
        spdlog::debug("claim files not staged: {}", staged.status().message());
        return std::unique_ptr<dra::StagedClaimFiles>();
      });
  StagedFiles out(task.get_future());
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(task));
    asked_ = true;  // under mu_: never after the thread took the task and cleared it
  }
  wake_.notify_one();
  return out;
}

void ClaimFileStager::Run() {
  std::unique_lock lock(mu_);
  bool refill_due = reserve_ != nullptr;
  for (;;) {
    if (refill_due && RefillWhenQuiet(lock)) refill_due = false;
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing handed over is left
    auto task = std::move(queue_.front());
    queue_.pop_front();
    asked_ = !queue_.empty() || stopping_;
    lock.unlock();
    task();
    lock.lock();
    refill_due = reserve_ != nullptr;
  }
}

bool ClaimFileStager::RefillWhenQuiet(std::unique_lock<std::mutex>& lock) {
  if (wake_.wait_for(lock, kQuietBeforeRefill, [&] { return stopping_ || !queue_.empty(); })) {
    return false;
  }
  lock.unlock();
  // Not a fault: staging makes what the reserve lacks, and names what stops it.
  if (Status made = reserve_->Refill([this] { return asked_.load(); }); !made.ok()) {
    spdlog::debug("claim files: making folders and files ahead: {}", made.message());
  }
  lock.lock();
  return true;
}

}  // namespace gfp::plugin::dra_mode
