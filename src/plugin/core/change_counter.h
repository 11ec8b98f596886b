// The version of the device view that ListAndWatch streams wait on. It is bumped whenever what
// kubelet is told may have changed (a device's health, Fabric Manager's usability, the module
// table), so every stream wakes and re-sends its device list.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace gfp::plugin::core {

class ChangeCounter {
 public:
  void Bump();
  // Wakes every waiter without a change (e.g. on shutdown).
  void WakeAll();
  std::uint64_t version() const;
  // Blocks until the version differs from `seen` or `timeout` passes; returns the version.
  std::uint64_t WaitForChange(std::uint64_t seen, std::chrono::milliseconds timeout) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::uint64_t version_ = 1;
};

}  // namespace gfp::plugin::core
