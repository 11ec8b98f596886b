#include "process/spawn.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace gfp::process {
namespace {

// What the child could not do before execve; sent to the parent over a close-on-exec pipe, which
// closes without a word when execve succeeds.
enum class Step : int { kDeathSignal = 1, kParentGone, kStdin, kStdout, kLog, kChdir, kExec };

struct ChildError {
  Step step;
  int error;
};

std::string StepText(Step step) {
  switch (step) {
    case Step::kDeathSignal:
      return "setting its parent-death signal";
    case Step::kParentGone:
      return "its parent ended before it started";
    case Step::kStdin:
      return "opening its stdin";
    case Step::kStdout:
      return "opening its stdout";
    case Step::kLog:
      return "opening its log";
    case Step::kChdir:
      return "changing to its working directory";
    case Step::kExec:
      return "execve";
  }
  return "an unknown step";
}

// Everything the child uses, built before fork: the child may not allocate.
struct Prepared {
  std::string executable;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::string stdin_path, stdout_path, log_path, working_dir;
  bool separate_stdout = false;
};

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

// A name without '/' is looked up in PATH, as a shell would; the program itself otherwise.
std::string Executable(const std::string& binary) {
  if (binary.find('/') != std::string::npos) return binary;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + binary;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return binary;  // execve says ENOENT
}

void Prepare(const ProcessOptions& o, Prepared& p) {
  p.executable = Executable(o.binary.string());
  p.argv_storage = {o.binary.string()};
  p.argv_storage.insert(p.argv_storage.end(), o.args.begin(), o.args.end());
  p.env_storage = ChildEnvironment(o);
  p.argv = Pointers(p.argv_storage);
  p.envp = Pointers(p.env_storage);
  p.stdin_path = o.stdin_path.empty() ? "/dev/null" : o.stdin_path.string();
  p.log_path = o.log_path.string();
  p.separate_stdout = !o.stdout_path.empty();
  p.stdout_path = p.separate_stdout ? o.stdout_path.string() : p.log_path;
  p.working_dir = o.working_dir.string();
}

// --- in the child: async-signal-safe calls only ---

[[noreturn]] void Fail(int report, Step step) {
  const ChildError e{step, errno};
  [[maybe_unused]] const ssize_t written = ::write(report, &e, sizeof e);
  ::_exit(127);
}

// Opens `path` onto descriptor `target` (without close-on-exec: the child keeps it).
bool OpenOnto(const char* path, int flags, int target) {
  const int fd = ::open(path, flags, 0600);
  if (fd < 0) return false;
  if (fd == target) return true;
  const bool moved = ::dup2(fd, target) == target;
  ::close(fd);
  return moved;
}

// Default dispositions and an empty mask, whatever the parent (a test runner, a shell that
// ignores SIGINT for background jobs, a thread blocking SIGTERM) set. SIGKILL, SIGSTOP and the
// C library's own signals refuse; they need no reset.
void ResetSignals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) ::sigaction(signal, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void RunChild(const Prepared& p, pid_t parent, int report) {
  // SIGKILL when the forking thread ends; if the parent already ended, nobody would send it.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) Fail(report, Step::kDeathSignal);
  if (::getppid() != parent) Fail(report, Step::kParentGone);
  ResetSignals();
  constexpr int kAppend = O_WRONLY | O_CREAT | O_APPEND;
  if (!OpenOnto(p.stdin_path.c_str(), O_RDONLY, STDIN_FILENO)) Fail(report, Step::kStdin);
  if (!OpenOnto(p.stdout_path.c_str(), kAppend, STDOUT_FILENO)) {
    Fail(report, p.separate_stdout ? Step::kStdout : Step::kLog);
  }
  const bool log_open = p.separate_stdout ? OpenOnto(p.log_path.c_str(), kAppend, STDERR_FILENO)
                                          : ::dup2(STDOUT_FILENO, STDERR_FILENO) == STDERR_FILENO;
  if (!log_open) Fail(report, Step::kLog);
  if (!p.working_dir.empty() && ::chdir(p.working_dir.c_str()) != 0) Fail(report, Step::kChdir);
  // Nothing inherited beyond 0-2; `report` (close-on-exec, above 2) stays to tell of a failure.
  ::close_range(STDERR_FILENO + 1, static_cast<unsigned>(report) - 1, 0);
  ::close_range(static_cast<unsigned>(report) + 1, UINT_MAX, 0);
  ::execve(p.executable.c_str(), p.argv.data(), p.envp.data());
  Fail(report, Step::kExec);
}

// --- in the parent ---

// A close-on-exec pipe whose write end is above 2, so the child's redirections cannot hit it.
Status ReportPipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Internal(std::string("cannot create a pipe: ") + std::strerror(errno));
  }
  if (fds[1] > STDERR_FILENO) return Status::Ok();
  const int moved = ::fcntl(fds[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int error = errno;
  ::close(fds[1]);
  fds[1] = moved;
  if (moved >= 0) return Status::Ok();
  ::close(fds[0]);
  return Internal(std::string("cannot move a pipe above descriptor 2: ") + std::strerror(error));
}

// What the child reported before execve; nullopt when the pipe closed empty (execve succeeded).
std::optional<ChildError> ReadReport(int fd) {
  ChildError e{};
  ssize_t n;
  do {
    n = ::read(fd, &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof e)) return e;
  return std::nullopt;
}

void ReapQuietly(pid_t pid) {
  int ignored = 0;
  while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<pid_t> Spawn(const ProcessOptions& o) {
  if (o.log_path.empty()) return InvalidArgument("ProcessOptions.log_path is required");
  Prepared p;
  Prepare(o, p);
  const std::string what =
      "cannot start " + o.binary.string() + " (log " + o.log_path.string() + ")";
  int report[2];
  GFP_RETURN_IF_ERROR(ReportPipe(report).WithContext(what));
  // Every signal blocked across fork: no handler of ours may run in the child before the reset.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) RunChild(p, parent, report[1]);
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return Internal(what + ": fork: " + std::strerror(fork_error));
  }
  const auto failed = ReadReport(report[0]);
  ::close(report[0]);
  if (!failed) return pid;
  ReapQuietly(pid);
  return Internal(what + ": " + StepText(failed->step) + ": " + std::strerror(failed->error));
}

}  // namespace gfp::process
