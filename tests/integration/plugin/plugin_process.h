// Runs the real `gpu-fabric-plugin` binary (or any program) as a child process for integration
// and crash tests: spawn with arguments and environment, capture stdout+stderr to a log file,
// wait with a timeout, SIGTERM then SIGKILL, SIGKILL at an arbitrary moment.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::testing {

// How a child ended.
struct ExitStatus {
  bool exited = false;  // normal exit with `code`
  int code = 0;
  int signal = 0;  // killed by this signal (when !exited)

  bool success() const { return exited && code == 0; }
  std::string ToString() const;
};

struct ProcessOptions {
  std::filesystem::path binary;
  std::vector<std::string> args;  // without argv[0]
  // Set (or override) in the child's environment, which otherwise is this process's.
  std::map<std::string, std::string> env;
  // Removed from the child's environment.
  std::vector<std::string> unset_env;
  // stdout and stderr of the child go here (appended).
  std::filesystem::path log_path;
};

class PluginProcess {
 public:
  static Result<std::unique_ptr<PluginProcess>> Start(ProcessOptions options);
  ~PluginProcess();  // SIGKILLs and reaps a child still running
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The command line, shell-quoted, to paste when reproducing a failure.
  std::string CommandLine() const;
  const std::filesystem::path& log_path() const { return options_.log_path; }

  // True while the child has not exited (reaps it when it has).
  bool Running();
  // The exit status once the child has ended, if it ended within `timeout`.
  std::optional<ExitStatus> WaitForExit(std::chrono::milliseconds timeout);
  // SIGTERM, wait up to `timeout`, then SIGKILL. Returns how the child ended.
  ExitStatus Terminate(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // SIGKILL now (a crash at an arbitrary point) and reap.
  ExitStatus Kill();
  std::optional<ExitStatus> exit_status() const { return exit_; }

  // The captured output so far.
  std::string Log() const;
  // Waits until the captured output contains `needle` (true), or the timeout passes or the
  // child exits without it (false).
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout);

 private:
  PluginProcess(ProcessOptions options, pid_t pid) : options_(std::move(options)), pid_(pid) {}
  bool Reap(bool block);

  ProcessOptions options_;
  pid_t pid_ = -1;
  std::optional<ExitStatus> exit_;
};

// Runs a program to completion (e.g. `gpu-fabric-plugin journal verify`), capturing its output.
struct CommandResult {
  ExitStatus status;
  std::string output;  // stdout and stderr, interleaved
  std::string command_line;
};
Result<CommandResult> RunCommand(ProcessOptions options,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Polls `condition` every `period` until it holds (true) or `timeout` passes (false).
template <typename Condition>
bool WaitUntil(Condition condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds period = std::chrono::milliseconds(20));

std::string ReadFileOrEmpty(const std::filesystem::path& path);

}  // namespace gfp::testing

#include <thread>

template <typename Condition>
bool gfp::testing::WaitUntil(Condition condition, std::chrono::milliseconds timeout,
                             std::chrono::milliseconds period) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(period);
  }
}
