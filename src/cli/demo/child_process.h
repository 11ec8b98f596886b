// A child process of this binary (`serve`), started with arguments and extra environment, its
// output going to a log file; stopped with SIGTERM or killed with SIGKILL (a crash).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::cli {

// The running executable's path (/proc/self/exe).
std::filesystem::path SelfExecutable();

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  Status Start(const std::filesystem::path& program, const std::vector<std::string>& args,
               const std::map<std::string, std::string>& env, const std::filesystem::path& log);
  // Sends `signal` and waits up to `timeout` for the exit; the exit code (128+n when killed).
  Result<int> Stop(int signal, std::chrono::milliseconds timeout);
  // The exit code if the process has ended (reaping it), nullopt while it runs.
  std::optional<int> Poll();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

}  // namespace gfp::cli
