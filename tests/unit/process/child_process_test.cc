// The shared child-process harness (src/process): what a child inherits from the process that
// starts it (an earlier fork + execve harness let a child inherit a blocked SIGTERM, an ignored
// SIGINT, the parent's stdin and every descriptor not marked close-on-exec), the options a
// test uses to run a program, and that a child dies with its parent.
#include "process/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "common/temp_dir.h"

namespace gfp::process {
namespace {

using namespace std::chrono_literals;

class ChildProcessTest : public ::testing::Test {
 protected:
  ProcessOptions Shell(const std::string& script) const {
    ProcessOptions o;
    o.binary = "/bin/sh";
    o.args = {"-c", script};
    o.log_path = dir_.path() / "child.log";
    return o;
  }

  gfp::testing::TempDir dir_;
};

// Blocks `signal` in this thread (the one that spawns) while alive.
class BlockedSignal {
 public:
  explicit BlockedSignal(int signal) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockedSignal() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

TEST_F(ChildProcessTest, ChildDiesOfSigtermThoughTheParentBlocksIt) {
  BlockedSignal blocked(SIGTERM);
  auto child = ChildProcess::Start(Shell("exec sleep 30"));
  ASSERT_TRUE(child.ok()) << child.status().message();
  const ExitStatus status = (*child)->Terminate(3s);
  EXPECT_FALSE(status.killed_after_timeout) << status.ToString();
  EXPECT_EQ(status.signal, SIGTERM) << status.ToString();
}

TEST_F(ChildProcessTest, ChildDiesOfSigintThoughTheParentIgnoresIt) {
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old);
  auto child = ChildProcess::Start(Shell("exec sleep 30"));
  ::sigaction(SIGINT, &old, nullptr);
  ASSERT_TRUE(child.ok()) << child.status().message();
  const ExitStatus status = (*child)->Terminate(3s, SIGINT);
  EXPECT_FALSE(status.killed_after_timeout) << status.ToString();
  EXPECT_EQ(status.signal, SIGINT) << status.ToString();
}

TEST_F(ChildProcessTest, StdinIsDevNullNotTheParents) {
  // The parent's stdin is a pipe nobody writes to: a child reading it would wait forever.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int saved_stdin = ::dup(STDIN_FILENO);
  ::dup2(pipe_fds[0], STDIN_FILENO);
  auto child = ChildProcess::Start(Shell("cat"));
  ::dup2(saved_stdin, STDIN_FILENO);
  ::close(saved_stdin);
  ASSERT_TRUE(child.ok()) << child.status().message();
  const auto status = (*child)->WaitForExit(5s);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ASSERT_TRUE(status.has_value()) << "cat still reads the parent's stdin";
  EXPECT_TRUE(status->success()) << status->ToString();
}

TEST_F(ChildProcessTest, InheritsNoDescriptorBeyondStderr) {
  // A descriptor without close-on-exec (a socket a test listens on, say) stays with the parent.
  const int fd = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, 100), 100);
  auto child = ChildProcess::Start(Shell("test ! -e /dev/fd/100"));
  ::close(100);
  ::close(fd);
  ASSERT_TRUE(child.ok()) << child.status().message();
  const auto status = (*child)->WaitForExit(5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->success()) << "the child inherited descriptor 100";
}

TEST_F(ChildProcessTest, OutputGoesToTheLogAndEnvironmentIsSetAndUnset) {
  ::setenv("GFP_PROCESS_TEST_DROP", "x", 1);
  ProcessOptions o =
      Shell("echo out=$GFP_PROCESS_TEST_SET; echo err=${GFP_PROCESS_TEST_DROP-unset} >&2");
  o.env = {{"GFP_PROCESS_TEST_SET", "a b"}};
  o.unset_env = {"GFP_PROCESS_TEST_DROP"};
  auto result = RunCommand(o, 5s);
  ::unsetenv("GFP_PROCESS_TEST_DROP");
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->status.success()) << result->status.ToString();
  EXPECT_NE(result->output.find("out=a b"), std::string::npos) << result->output;
  EXPECT_NE(result->output.find("err=unset"), std::string::npos) << result->output;
  EXPECT_NE(result->command_line.find("GFP_PROCESS_TEST_SET='a b'"), std::string::npos)
      << result->command_line;
}

TEST_F(ChildProcessTest, TerminateKillsAChildThatIgnoresTheSignal) {
  auto child = ChildProcess::Start(Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"));
  ASSERT_TRUE(child.ok()) << child.status().message();
  ASSERT_TRUE((*child)->WaitForLog("ready", 5s));
  const ExitStatus status = (*child)->Terminate(300ms);
  EXPECT_TRUE(status.killed_after_timeout) << status.ToString();
  EXPECT_EQ(status.signal, SIGKILL) << status.ToString();
  EXPECT_EQ(status.ShellCode(), 128 + SIGKILL);
}

TEST_F(ChildProcessTest, AMissingProgramIsAnErrorNamingIt) {
  ProcessOptions o = Shell("true");
  o.binary = dir_.path() / "no-such-program";
  auto child = ChildProcess::Start(o);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("no-such-program"), std::string::npos)
      << child.status().message();
}

TEST_F(ChildProcessTest, StdoutToItsOwnFileStdinFromAFileAndAWorkingDirectory) {
  const auto work = dir_.path() / "work dir";
  std::filesystem::create_directories(work);
  std::ofstream(dir_.path() / "in.txt") << "from the file\n";
  ProcessOptions o = Shell("cat; pwd; echo to-stderr >&2");
  o.stdin_path = dir_.path() / "in.txt";
  o.stdout_path = dir_.path() / "out.txt";
  o.working_dir = work;
  auto result = RunCommand(o, 5s);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->status.success()) << result->status.ToString();
  EXPECT_EQ(result->stdout_text, "from the file\n" + work.string() + "\n");
  EXPECT_EQ(result->output, "to-stderr\n");
  EXPECT_NE(result->command_line.find(" < "), std::string::npos) << result->command_line;
}

TEST_F(ChildProcessTest, ABareNameIsLookedUpInPath) {
  ProcessOptions o = Shell("exit 3");
  o.binary = "sh";
  auto result = RunCommand(o, 5s);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->status.ShellCode(), 3) << result->status.ToString() << result->output;
}

TEST_F(ChildProcessTest, AMissingWorkingDirectoryIsAnErrorNamingTheStep) {
  ProcessOptions o = Shell("true");
  o.working_dir = dir_.path() / "absent";
  auto child = ChildProcess::Start(o);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find("working directory"), std::string::npos)
      << child.status().message();
}

// glibc 2.36's <sys/pidfd.h> lacks extern "C"; the system calls directly.
int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }
void PidfdKill(int pidfd) { ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0); }

// Whether `pidfd`'s process ended within `timeout` (a zombie nobody reaps counts as ended).
bool EndsWithin(int pidfd, std::chrono::milliseconds timeout) {
  pollfd p{pidfd, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (ready < 0 && errno == EINTR);
  return ready == 1;
}

// A test binary that aborts (or is SIGKILLed) must leave no child running: the child dies with
// the process that started it. The parent here is a helper process; this test kills it.
TEST_F(ChildProcessTest, ChildDiesWhenItsParentIsKilled) {
  ProcessOptions o;
  o.binary = GFP_PROCESS_TEST_PARENT;
  o.args = {(dir_.path() / "grandchild.log").string()};
  o.log_path = dir_.path() / "parent.log";
  auto parent = ChildProcess::Start(o);
  ASSERT_TRUE(parent.ok()) << parent.status().message();
  ASSERT_TRUE((*parent)->WaitForLog("child ", 10s)) << (*parent)->Log();
  const pid_t grandchild = std::stoi((*parent)->Log().substr(6));
  const int pidfd = PidfdOpen(grandchild);
  ASSERT_GE(pidfd, 0) << "the sleeper " << grandchild << " is not running: " << (*parent)->Log();
  EXPECT_EQ((*parent)->Kill().signal, SIGKILL);
  const bool ended = EndsWithin(pidfd, 10s);
  EXPECT_TRUE(ended) << "the child " << grandchild << " outlived its SIGKILLed parent";
  if (!ended) PidfdKill(pidfd);  // leave no orphan behind
  ::close(pidfd);
}

// The header's warning, pinned: the parent-death signal follows the thread that started the
// child, so a child started from a worker thread dies when that thread returns.
TEST_F(ChildProcessTest, ChildDiesWithTheThreadThatStartedIt) {
  std::unique_ptr<ChildProcess> child;
  std::thread worker([&] {
    auto started = ChildProcess::Start(Shell("exec sleep 300"));
    if (started.ok()) child = std::move(started).value();
  });
  worker.join();
  ASSERT_NE(child, nullptr);
  const auto status = child->WaitForExit(10s);
  ASSERT_TRUE(status.has_value()) << "the child outlived the thread that started it";
  EXPECT_EQ(status->signal, SIGKILL) << status->ToString();
}

}  // namespace
}  // namespace gfp::process
