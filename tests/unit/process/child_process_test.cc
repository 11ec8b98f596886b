// The shared child-process harness (src/process): what a child inherits from the process that
// starts it. The demo's former harness (fork + execve) let a child inherit a blocked SIGTERM, an
// ignored SIGINT, the parent's stdin and every descriptor not marked close-on-exec.
#include "process/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

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

}  // namespace
}  // namespace gfp::process
