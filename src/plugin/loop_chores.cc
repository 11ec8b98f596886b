#include "plugin/loop_chores.h"

#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <thread>

namespace gfp::plugin {
namespace {

constexpr std::chrono::seconds kCheckpointWhenIdleFor{2};

}  // namespace

VfioWatch::VfioWatch(const std::filesystem::path& dev_root) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return;
  const auto dir = dev_root / "vfio";
  if (::inotify_add_watch(fd_, dir.c_str(),
                          IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB) < 0) {
    spdlog::warn("cannot watch {} for VFIO group changes; relying on periodic checks",
                 dir.string());
    ::close(fd_);
    fd_ = -1;
  }
}

VfioWatch::~VfioWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool VfioWatch::Wait(std::chrono::milliseconds timeout) {
  if (fd_ < 0) {
    std::this_thread::sleep_for(timeout);
    return false;
  }
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
  char buffer[4096];
  while (::read(fd_, buffer, sizeof buffer) > 0) {
  }
  return true;
}

void IdleCheckpointer::Turn(engine::Engine& engine) {
  Status status = engine.journal().CheckpointIfIdle(kCheckpointWhenIdleFor);
  std::string problem = status.ok() ? std::string() : status.message();
  if (problem == problem_) return;
  if (problem.empty()) {
    spdlog::info("journal checkpoint works again");
  } else {
    spdlog::warn("{} (retrying while idle)", problem);
  }
  problem_ = std::move(problem);
}

}  // namespace gfp::plugin
