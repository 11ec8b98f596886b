#include "integration/plugin/plugin_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace gfp::testing {
namespace {

using Steady = std::chrono::steady_clock;

std::string Quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;!#~") == std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

ExitStatus Decode(int wstatus) {
  ExitStatus s;
  if (WIFEXITED(wstatus)) {
    s.exited = true;
    s.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    s.signal = WTERMSIG(wstatus);
  }
  return s;
}

std::string CommandLineOf(const ProcessOptions& o) {
  std::string out;
  for (const auto& [key, value] : o.env) out += key + "=" + Quote(value) + " ";
  out += Quote(o.binary.string());
  for (const auto& a : o.args) out += " " + Quote(a);
  return out;
}

// The child's environment: ours, minus `unset_env`, with `env` set.
std::vector<std::string> ChildEnvironment(const ProcessOptions& o) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    if (o.env.count(key)) continue;
    if (std::find(o.unset_env.begin(), o.unset_env.end(), key) != o.unset_env.end()) continue;
    out.push_back(std::move(entry));
  }
  for (const auto& [key, value] : o.env) out.push_back(key + "=" + value);
  return out;
}

Result<pid_t> Spawn(const ProcessOptions& o) {
  if (o.log_path.empty()) return InvalidArgument("ProcessOptions.log_path is required");
  std::vector<std::string> argv_storage;
  argv_storage.push_back(o.binary.string());
  argv_storage.insert(argv_storage.end(), o.args.begin(), o.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = ChildEnvironment(o);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string log = o.log_path.string();
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Default signal dispositions and an empty mask in the child, whatever the test runner set.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Internal("posix_spawn " + o.binary.string() + ": " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (exited) return "exit code " + std::to_string(code);
  if (signal)
    return std::string("killed by signal ") + std::to_string(signal) + " (" + ::strsignal(signal) +
           ")";
  return "not ended";
}

std::string ReadFileOrEmpty(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

Result<std::unique_ptr<PluginProcess>> PluginProcess::Start(ProcessOptions options) {
  GFP_ASSIGN_OR_RETURN(pid_t pid, Spawn(options));
  return std::unique_ptr<PluginProcess>(new PluginProcess(std::move(options), pid));
}

PluginProcess::~PluginProcess() {
  if (!exit_) Kill();
}

std::string PluginProcess::CommandLine() const { return CommandLineOf(options_); }

bool PluginProcess::Reap(bool block) {
  if (exit_) return true;
  int wstatus = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &wstatus, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_ = Decode(wstatus);
    return true;
  }
  if (r < 0) {  // not our child any more (cannot happen unless someone else reaped it)
    exit_ = ExitStatus{};
    return true;
  }
  return false;
}

bool PluginProcess::Running() { return !Reap(false); }

std::optional<ExitStatus> PluginProcess::WaitForExit(std::chrono::milliseconds timeout) {
  WaitUntil([&] { return Reap(false); }, timeout, std::chrono::milliseconds(10));
  return exit_;
}

ExitStatus PluginProcess::Terminate(std::chrono::milliseconds timeout) {
  if (Reap(false)) return *exit_;
  ::kill(pid_, SIGTERM);
  if (WaitForExit(timeout)) return *exit_;
  return Kill();
}

ExitStatus PluginProcess::Kill() {
  if (Reap(false)) return *exit_;
  ::kill(pid_, SIGKILL);
  Reap(true);
  return *exit_;
}

std::string PluginProcess::Log() const { return ReadFileOrEmpty(options_.log_path); }

bool PluginProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        if (Log().find(needle) != std::string::npos) return true;
        // One last look after an exit: the message may be the last thing it wrote.
        return !Running() && Log().find(needle) != std::string::npos;
      },
      timeout, std::chrono::milliseconds(20));
}

Result<CommandResult> RunCommand(ProcessOptions options, std::chrono::milliseconds timeout) {
  std::error_code ignored;
  std::filesystem::remove(options.log_path, ignored);
  GFP_ASSIGN_OR_RETURN(auto process, PluginProcess::Start(options));
  CommandResult result;
  result.command_line = process->CommandLine();
  auto status = process->WaitForExit(timeout);
  if (!status) {
    result.status = process->Kill();
    result.output = process->Log();
    return DeadlineExceeded(result.command_line + " did not finish within " +
                            std::to_string(timeout.count()) + " ms; output:\n" + result.output);
  }
  result.status = *status;
  result.output = process->Log();
  return result;
}

}  // namespace gfp::testing
