#include "process/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace gfp::process {
namespace {

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
  for (const auto& key : o.unset_env) out += "-u " + Quote(key) + " ";
  if (!out.empty()) out = "env " + out;
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

std::vector<char*> Pointers(std::vector<std::string>& storage) {
  std::vector<char*> out;
  for (auto& s : storage) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// stdin from /dev/null, stdout and stderr appended to the log, nothing else inherited.
void SetUpFiles(posix_spawn_file_actions_t* actions, const std::string& log) {
  posix_spawn_file_actions_addopen(actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addclosefrom_np(actions, STDERR_FILENO + 1);
}

// Default dispositions and an empty mask in the child, whatever the parent (a test runner, a
// shell that ignores SIGINT for background jobs, a thread blocking SIGTERM) set.
void ResetSignals(posix_spawnattr_t* attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}

Result<pid_t> Spawn(const ProcessOptions& o) {
  if (o.log_path.empty()) return InvalidArgument("ProcessOptions.log_path is required");
  std::vector<std::string> argv_storage = {o.binary.string()};
  argv_storage.insert(argv_storage.end(), o.args.begin(), o.args.end());
  std::vector<std::string> env_storage = ChildEnvironment(o);
  std::vector<char*> argv = Pointers(argv_storage);
  std::vector<char*> envp = Pointers(env_storage);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  SetUpFiles(&actions, o.log_path.string());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  ResetSignals(&attr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Internal("cannot start " + o.binary.string() + " (log " + o.log_path.string() +
                    "): " + std::strerror(rc));
  }
  return pid;
}

}  // namespace

std::string ExitStatus::ToString() const {
  std::string out;
  if (exited) {
    out = "exit code " + std::to_string(code);
  } else if (signal) {
    out = "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  } else {
    out = "not ended";
  }
  return killed_after_timeout ? out + ", after its stop timeout" : out;
}

std::string ReadFileOrEmpty(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::filesystem::path SelfExecutable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : path;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(ProcessOptions options) {
  GFP_ASSIGN_OR_RETURN(pid_t pid, Spawn(options));
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(options), pid));
}

ChildProcess::~ChildProcess() {
  if (!exit_) Kill();
}

std::string ChildProcess::CommandLine() const { return CommandLineOf(options_); }

bool ChildProcess::Reap(bool block) {
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

bool ChildProcess::Running() { return !Reap(false); }

std::optional<ExitStatus> ChildProcess::WaitForExit(std::chrono::milliseconds timeout) {
  WaitUntil([&] { return Reap(false); }, timeout, std::chrono::milliseconds(5));
  return exit_;
}

ExitStatus ChildProcess::Terminate(std::chrono::milliseconds timeout, int signal) {
  if (Reap(false)) return *exit_;
  ::kill(pid_, signal);
  if (WaitForExit(timeout)) return *exit_;
  Kill();
  exit_->killed_after_timeout = true;
  return *exit_;
}

ExitStatus ChildProcess::Kill() {
  if (Reap(false)) return *exit_;
  ::kill(pid_, SIGKILL);
  Reap(true);
  return *exit_;
}

std::string ChildProcess::Log() const { return ReadFileOrEmpty(options_.log_path); }

bool ChildProcess::WaitForLog(const std::string& needle, std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        if (Log().find(needle) != std::string::npos) return true;
        // One last look after an exit: the message may be the last thing it wrote.
        return !Running() && Log().find(needle) != std::string::npos;
      },
      timeout, std::chrono::milliseconds(20));
}

Result<CommandResult> RunCommand(const ProcessOptions& options, std::chrono::milliseconds timeout) {
  std::error_code ignored;
  std::filesystem::remove(options.log_path, ignored);
  GFP_ASSIGN_OR_RETURN(auto process, ChildProcess::Start(options));
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

}  // namespace gfp::process
