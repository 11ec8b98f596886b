// What both days of the demo share (SPEC §2.3): the numbered steps that stop at the first one
// that misbehaves, the world's folder, and the world made from the flags with its banner.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "sim/demo/demo_command.h"
#include "sim/world/process_world.h"

namespace gfp::simdemo {

// Runs the day's steps in order, stopping at the first that misbehaves.
class Script {
 public:
  explicit Script(simworld::ProcessWorld& world) : world_(world) {}

  bool Step(const std::string& what, const std::function<Status()>& body);
  bool failed() const { return failed_; }

 private:
  simworld::ProcessWorld& world_;
  int number_ = 0;
  bool failed_ = false;
};

// A world built from the flags (`options` says the rest), after printing `title` and where it
// lives; an error names what is missing.
struct DemoWorld {
  std::filesystem::path dir;
  std::unique_ptr<simworld::ProcessWorld> world;
};
Result<DemoWorld> MakeDemoWorld(const DemoFlags& flags, simworld::ProcessWorldOptions options,
                                const std::string& title);

// Prints "demo passed" or "demo FAILED", stops the fake kubelet and removes a temporary world
// that passed; the exit code.
int FinishDemo(DemoWorld& demo, const DemoFlags& flags, bool ok);

}  // namespace gfp::simdemo
