#include "cli/demo/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace gfp::cli {
namespace {

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

}  // namespace

std::filesystem::path SelfExecutable() {
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : path;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Stop(SIGKILL, std::chrono::seconds(5)).status().IgnoreError();
}

Status ChildProcess::Start(const std::filesystem::path& program,
                           const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env,
                           const std::filesystem::path& log) {
  if (pid_ > 0) return FailedPrecondition("process " + std::to_string(pid_) + " still runs");
  std::vector<std::string> argv_storage = {program.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (!env.count(key)) env_storage.push_back(entry);
  }
  for (const auto& [key, value] : env) env_storage.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return Internal("cannot open " + log.string() + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Internal(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = pid;
  return Status::Ok();
}

std::optional<int> ChildProcess::Poll() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return ExitCodeOf(status);
  }
  return std::nullopt;
}

Result<int> ChildProcess::Stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return FailedPrecondition("no process to stop");
  ::kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto code = Poll()) return *code;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return DeadlineExceeded("process did not stop within " + std::to_string(timeout.count()) +
                          " ms of signal " + std::to_string(signal) + "; killed");
}

}  // namespace gfp::cli
