// No moment in which another user may connect to a socket serve is setting up: gRPC creates the
// socket under the process umask and serve makes it 0600 only afterwards, so it is bound inside a
// private 0700 folder. Here `nobody`, in a child process, tries every temporary name it can see
// while serve's UnixSocketServer starts and stops over and over with umask 000 (before the fix it
// got 2,792 connections in such a run).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>

#include "common/temp_dir.h"
#include "plugin/rpc/unix_socket_server.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace gfp::plugin::rpc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool Connects(const fs::path& path) {
  sockaddr_un addr{};
  if (path.native().size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.native().size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return connected;
}

// The child: as nobody, until `stop` reads end-of-file (or for at most `limit`), connects to every
// .gfp* name in `dir` (and to the socket inside a .gfp*.d folder); exits with the number of
// connections made (at most 250).
[[noreturn]] void ProbeAsNobody(const fs::path& dir, int stop, std::chrono::seconds limit) {
  if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(254);
  int connected = 0;
  const auto end = Clock::now() + limit;
  pollfd stopped{stop, POLLIN, 0};
  while (Clock::now() < end && connected < 250 && ::poll(&stopped, 1, 0) == 0) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(".gfp", 0) != 0) continue;
      if (Connects(entry.path()) || Connects(entry.path() / "grpc.sock")) ++connected;
    }
  }
  ::_exit(connected);
}

TEST(SocketWindowTest, NobodyElseConnectsWhileTheSocketIsSetUp) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run the probe as nobody";
  gfp::testing::TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);  // as a device-plugin folder others can list
  int stop[2];
  ASSERT_EQ(::pipe(stop), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(stop[1]);
    ProbeAsNobody(dir.path(), stop[0], std::chrono::seconds(20));
  }
  ::close(stop[0]);

  pluginregistration::Registration::Service unimplemented;  // a server needs one service
  const mode_t previous_umask = ::umask(0);
  int served = 0;
  const auto end = Clock::now() + std::chrono::seconds(4);
  while (Clock::now() < end) {
    UnixSocketServer server("window test", dir.path() / "kubevirt-test.sock");
    const Status status = server.Serve({&unimplemented});
    ASSERT_TRUE(status.ok()) << status.message();
    ++served;
    server.Stop();
  }
  ::umask(previous_umask);
  ::close(stop[1]);
  int wait_status = 0;
  ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  if (WEXITSTATUS(wait_status) == 254) GTEST_SKIP() << "cannot become nobody";
  const int connections = WEXITSTATUS(wait_status);
  EXPECT_EQ(connections, 0) << "nobody connected " << connections << " times in " << served
                            << " starts";
  EXPECT_GT(served, 5);
}

}  // namespace
}  // namespace gfp::plugin::rpc
