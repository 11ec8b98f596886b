#include "process/child_process.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "process/spawn.h"

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
  if (!o.stdin_path.empty()) out += " < " + Quote(o.stdin_path.string());
  if (!o.stdout_path.empty()) out += " >> " + Quote(o.stdout_path.string());
  if (!o.working_dir.empty()) out = "cd " + Quote(o.working_dir.string()) + " && " + out;
  return out;
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

ExitStatus ChildProcess::Wait() {
  Reap(true);
  return *exit_;
}

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
  // Only this run's output; a device (/dev/null) is left alone.
  for (const auto& path : {options.log_path, options.stdout_path}) {
    std::error_code ignored;
    if (std::filesystem::is_regular_file(path, ignored)) std::filesystem::remove(path, ignored);
  }
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
  std::error_code ignored;  // not /dev/full: it reads as endless zeros
  if (std::filesystem::is_regular_file(options.stdout_path, ignored)) {
    result.stdout_text = ReadFileOrEmpty(options.stdout_path);
  }
  return result;
}

}  // namespace gfp::process
