// Temporary sockets a killed plugin left in the device-plugin directory are cleaned up at start,
// and nothing else there is touched.
#include "plugin/rpc/socket_guard.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

// The private bind folders (MakePrivateBindPath) a killed plugin left: removed with their dead
// socket; a symlink of that name is not followed, a folder holding anything else stays.
TEST(RemoveStaleTemporarySockets, RemovesDeadProcessesBindFoldersWithoutFollowingLinks) {
  gfp::testing::TempDir dir;
  const std::string gone = std::string(".gfp") + kGonePid;
  const fs::path stale = dir.path() / (gone + ".1.d");
  const fs::path answering = dir.path() / (gone + ".2.d");
  const fs::path cluttered = dir.path() / (gone + ".3.d");
  const fs::path link = dir.path() / (gone + ".4.d");
  const fs::path elsewhere = dir.path() / "elsewhere";
  for (const fs::path& folder : {stale, answering, cluttered, elsewhere}) {
    fs::create_directory(folder);
  }
  const int fds[] = {BindSocket(stale / "grpc.sock", false),
                     BindSocket(answering / "grpc.sock", true),
                     BindSocket(elsewhere / "grpc.sock", false)};
  std::ofstream(cluttered / "notes") << "x";
  fs::create_directory_symlink(elsewhere, link);

  EXPECT_EQ(RemoveStaleTemporarySockets(dir.path()), std::vector<fs::path>{stale});
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(answering / "grpc.sock")) << "something answers there";
  EXPECT_TRUE(fs::exists(cluttered / "notes"));
  EXPECT_TRUE(fs::exists(elsewhere / "grpc.sock")) << "followed the symlink";
  EXPECT_TRUE(fs::is_symlink(link));
  for (int fd : fds) ::close(fd);
}

// The folder is 0700 whatever the umask, and unique per call.
TEST(MakePrivateBindPath, AFolderOnlyItsOwnerEnters) {
  gfp::testing::TempDir dir;
  const mode_t previous = ::umask(0);
  auto first = MakePrivateBindPath(dir.path());
  auto second = MakePrivateBindPath(dir.path());
  ::umask(previous);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_NE(first->parent_path(), second->parent_path());
  EXPECT_EQ(first->filename(), "grpc.sock");
  EXPECT_EQ(fs::status(first->parent_path()).permissions(), fs::perms::owner_all);
  RemovePrivateBindPath(*first);
  EXPECT_FALSE(fs::exists(first->parent_path()));
  EXPECT_FALSE(MakePrivateBindPath(dir.path() / "absent").ok());
}

TEST(RemoveStaleTemporarySockets, AMissingDirectoryRemovesNothing) {
  EXPECT_TRUE(RemoveStaleTemporarySockets("/nonexistent/device-plugins").empty());
}

}  // namespace
}  // namespace gfp::plugin::rpc
