// One way to run a program as a child process, for the demo (it runs `serve`), the integration
// and crash tests, the benchmarks and every test that runs a program: fork + execve with
// arguments and extra environment, stdin from /dev/null (or a file), stdout and stderr appended
// to a log file (or stdout to a file of its own), default signal dispositions and an empty signal
// mask in the child (whatever the parent blocks or ignores), no inherited file descriptors beyond
// 0-2; waiting, SIGTERM then SIGKILL, SIGKILL at an arbitrary moment.
//
// A child dies with its parent: it gets SIGKILL (PR_SET_PDEATHSIG) when the process that started
// it ends, however it ends (an aborting test, a crash, SIGKILL), so no orphan `serve` outlives a
// test run. Linux sends that signal when the *thread* that started the child exits, not only the
// process: start a child from a thread that outlives it (a test's own thread, main's thread),
// never from a short-lived worker thread, or the child is killed when that worker returns.
// (The signal is also cleared by exec of a set-user-ID or file-capability program.)
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
  std::filesystem::path binary;  // a name without '/' is looked up in PATH

  std::vector<std::string> args;  // without argv[0]
  // Set (or override) in the child's environment, which otherwise is this process's.
  std::map<std::string, std::string> env;
  // Removed from the child's environment.
  std::vector<std::string> unset_env;
  // stderr of the child goes here, and stdout unless stdout_path is set (appended; required).
  std::filesystem::path log_path;
  // stdout of the child goes here instead (appended; /dev/null or /dev/full work too).
  std::filesystem::path stdout_path;
  // stdin of the child reads this file; /dev/null when empty.
  std::filesystem::path stdin_path;
  // The child's working directory; this process's when empty.
  std::filesystem::path working_dir;
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
  // Blocks until the child ends (a benchmark timing it: no polling period added).
  ExitStatus Wait();
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
  std::string output;       // stdout and stderr, interleaved (only stderr with a stdout_path)
  std::string stdout_text;  // what went to stdout_path, when that is a regular file
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
