// One way to run a program as a child process, for the demo (it runs `serve`), the integration
// and crash tests, and the benchmarks: posix_spawn with arguments and extra environment, stdin
// from /dev/null, stdout and stderr appended to a log file, default signal dispositions and an
// empty signal mask in the child (whatever the parent blocks or ignores), no inherited file
// descriptors beyond 0-2; waiting, SIGTERM then SIGKILL, SIGKILL at an arbitrary moment.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace gfp::process {

// How a child ended.
struct ExitStatus {
  bool exited = false;  // normal exit with `code`
  int code = 0;
  int signal = 0;  // killed by this signal (when !exited)
  // Terminate's signal was not enough within its timeout: SIGKILLed.
  bool killed_after_timeout = false;

  bool success() const { return exited && code == 0; }
  // As a shell reports it: the exit code, or 128 + the signal.
  int ShellCode() const { return exited ? code : 128 + signal; }
  std::string ToString() const;
};

struct ProcessOptions {
  std::filesystem::path binary;
  std::vector<std::string> args;  // without argv[0]
  // Set (or override) in the child's environment, which otherwise is this process's.
  std::map<std::string, std::string> env;
  // Removed from the child's environment.
  std::vector<std::string> unset_env;
  // stdout and stderr of the child go here (appended; required).
  std::filesystem::path log_path;
};

class ChildProcess {
 public:
  static Result<std::unique_ptr<ChildProcess>> Start(ProcessOptions options);
  ~ChildProcess();  // SIGKILLs and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The command line, shell-quoted, to paste when reproducing a failure.
  std::string CommandLine() const;
  const std::filesystem::path& log_path() const { return options_.log_path; }

  // True while the child has not exited (reaps it when it has).
  bool Running();
  // The exit status once the child has ended, if it ended within `timeout`.
  std::optional<ExitStatus> WaitForExit(std::chrono::milliseconds timeout);
  // Sends `signal` (SIGTERM by default), waits up to `timeout`, then SIGKILLs
  // (killed_after_timeout). Returns how the child ended.
  ExitStatus Terminate(std::chrono::milliseconds timeout = std::chrono::seconds(10),
                       int signal = SIGTERM);
  // SIGKILL now (a crash at an arbitrary point) and reap.
  ExitStatus Kill();
  std::optional<ExitStatus> exit_status() const { return exit_; }

  // The captured output so far.
  std::string Log() const;
  // Waits until the captured output contains `needle` (true), or the timeout passes or the
  // child exits without it (false).
  bool WaitForLog(const std::string& needle, std::chrono::milliseconds timeout);

 private:
  ChildProcess(ProcessOptions options, pid_t pid) : options_(std::move(options)), pid_(pid) {}
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
Result<CommandResult> RunCommand(const ProcessOptions& options,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Polls `condition` every `period` until it holds (true) or `timeout` passes (false).
template <typename Condition>
bool WaitUntil(Condition condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds period = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(period);
  }
}

std::string ReadFileOrEmpty(const std::filesystem::path& path);

// The running executable's path (/proc/self/exe); empty if unknown.
std::filesystem::path SelfExecutable();

}  // namespace gfp::process
