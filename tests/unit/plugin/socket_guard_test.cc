// Temporary sockets a killed plugin left in the device-plugin directory are cleaned up at start,
// and nothing else there is touched.
#include "plugin/rpc/socket_guard.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "common/temp_dir.h"

namespace gfp::plugin::rpc {
namespace {

namespace fs = std::filesystem;

// Binds a Unix socket at `path`; listens when `listen` (then it is live while the fd is open).
int BindSocket(const fs::path& path, bool listen) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << path;
  if (listen) {
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  return fd;
}

// A pid no process has: above the kernel's pid_max (4194304 at most).
constexpr const char* kGonePid = "4194305";

TEST(RemoveStaleTemporarySockets, RemovesOnlyDeadProcessesSocketsNobodyAnswersOn) {
  gfp::testing::TempDir dir;
  const fs::path stale = dir.path() / (std::string(".gfp") + kGonePid + ".1.sock");
  const fs::path ours_before = dir.path() / (".gfp" + std::to_string(::getpid()) + ".7.sock");
  const fs::path live_pid = dir.path() / ".gfp1.2.sock";  // pid 1 is alive outside containers
  const fs::path answering = dir.path() / (std::string(".gfp") + kGonePid + ".3.sock");
  const fs::path foreign = dir.path() / "kubevirt-GH100_H100_SXM5_80GB.sock";
  const fs::path not_a_socket = dir.path() / (std::string(".gfp") + kGonePid + ".4.sock");
  const fs::path odd_name = dir.path() / (std::string(".gfp") + kGonePid + ".sock");
  const int fds[] = {BindSocket(stale, false), BindSocket(ours_before, false),
                     BindSocket(answering, true), BindSocket(foreign, false),
                     BindSocket(odd_name, false)};
  const bool pid1_alive = ::getpid() != 1;
  const int live_fd = pid1_alive ? BindSocket(live_pid, false) : -1;
  std::ofstream(not_a_socket) << "x";

  std::vector<fs::path> removed = RemoveStaleTemporarySockets(dir.path());
  std::sort(removed.begin(), removed.end());
  std::vector<fs::path> expected = {stale, ours_before};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(removed, expected);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(ours_before));
  EXPECT_TRUE(fs::exists(answering)) << "a socket something answers on is never removed";
  EXPECT_TRUE(fs::exists(foreign)) << "only temporary names are ours to clean";
  EXPECT_TRUE(fs::exists(not_a_socket));
  EXPECT_TRUE(fs::exists(odd_name));
  if (pid1_alive) {
    EXPECT_TRUE(fs::exists(live_pid)) << "its process may still install it";
  }
  for (int fd : fds) ::close(fd);
  if (live_fd >= 0) ::close(live_fd);
}

TEST(RemoveStaleTemporarySockets, AMissingDirectoryRemovesNothing) {
  EXPECT_TRUE(RemoveStaleTemporarySockets("/nonexistent/device-plugins").empty());
}

}  // namespace
}  // namespace gfp::plugin::rpc
