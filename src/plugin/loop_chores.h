// Chores both serve loops (device plugin, DRA) do each turn: wait for VFIO group nodes to come
// and go (inotify on <dev-root>/vfio, the health trigger), and checkpoint the journal's -wal
// into its main file once appends paused.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "engine/engine.h"

namespace gfp::plugin {

class VfioWatch {
 public:
  explicit VfioWatch(const std::filesystem::path& dev_root);
  ~VfioWatch();
  VfioWatch(const VfioWatch&) = delete;
  VfioWatch& operator=(const VfioWatch&) = delete;

  // Waits up to `timeout` for group nodes to change; true when some did (events drained).
  // Without a watch (the folder cannot be watched) it sleeps and says false.
  bool Wait(std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

// Journal (issue 8): checkpoints once appends paused; a failure (a full disk, most often) is
// retried every turn and said once per change.
class IdleCheckpointer {
 public:
  void Turn(engine::Engine& engine);

 private:
  std::string problem_;  // the last failure logged, empty while it works
};

}  // namespace gfp::plugin
