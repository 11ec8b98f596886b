#include "plugin/core/change_counter.h"

namespace gfp::plugin::core {

void ChangeCounter::Bump() {
  {
    std::lock_guard lock(mu_);
    ++version_;
  }
  cv_.notify_all();
}

void ChangeCounter::WakeAll() { cv_.notify_all(); }

std::uint64_t ChangeCounter::version() const {
  std::lock_guard lock(mu_);
  return version_;
}

std::uint64_t ChangeCounter::WaitForChange(std::uint64_t seen,
                                           std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return version_ != seen; });
  return version_;
}

}  // namespace gfp::plugin::core
