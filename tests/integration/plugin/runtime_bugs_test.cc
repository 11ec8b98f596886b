// Run-time faults a hostile tester found (issue 8): sockets taken over or left world-writable,
// unbounded and unescaped refusals in the journal and the log, and misleading messages.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

// A Unix socket server of the test's own: bound and listening (connect() succeeds on it).
class ForeignServer {
 public:
  explicit ForeignServer(const std::filesystem::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
          ::listen(fd_, 64) == 0;
    struct stat st {};
    if (ok_ && ::stat(path.c_str(), &st) == 0) inode_ = st.st_ino;
  }
  ~ForeignServer() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return ok_; }
  // Our socket file is still at the path (same inode) and a client can connect to it.
  bool StillThereAndAnswering() const {
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || st.st_ino != inode_) return false;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof(addr.sun_path) - 1);
    const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    return connected;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool ok_ = false;
  ino_t inode_ = 0;
};

class RuntimeBugsTest : public ServeFixture {
 protected:
  std::filesystem::path OurSocket() const {
    return device_plugin_dir_ / ("kubevirt-" + resource_.substr(11) + ".sock");
  }
};

// SPEC §3: never steal a socket that a live server answers on — also not at run time, when a
// kubelet restart makes serve serve again, and not at shutdown.
TEST_F(RuntimeBugsTest, ReServeNeverTakesOverALiveForeignSocket) {
  Prepare({});
  StartServe();
  const auto socket = OurSocket();
  ASSERT_TRUE(std::filesystem::remove(socket));
  ForeignServer foreign(socket);
  ASSERT_TRUE(foreign.ok()) << std::strerror(errno);
  // A kubelet restart that leaves the directory as it is: kubelet.sock is re-created.
  kubelet_->Stop();
  ASSERT_TRUE(kubelet_->Start().ok());
  EXPECT_TRUE(serve_->WaitForLog("another server is answering on " + socket.string(), 10s))
      << serve_->Log();
  std::this_thread::sleep_for(1500ms);  // several retries of the serve loop
  EXPECT_TRUE(foreign.StillThereAndAnswering()) << "serve took over or removed the socket";
  EXPECT_TRUE(serve_->Running());
  auto exit = serve_->Terminate();
  EXPECT_TRUE(exit.success()) << exit.ToString();
  EXPECT_TRUE(foreign.StillThereAndAnswering()) << "serve removed the socket at shutdown";
  // No stray temporary socket names are left in the directory.
  for (const auto& entry : std::filesystem::directory_iterator(device_plugin_dir_)) {
    const auto name = entry.path().filename().string();
    EXPECT_TRUE(name == "kubelet.sock" || entry.path() == socket) << "left behind: " << name;
  }
}

// Once the foreign server is gone, serve serves and registers again.
TEST_F(RuntimeBugsTest, ReServesOnceTheForeignServerIsGone) {
  Prepare({});
  StartServe();
  const auto socket = OurSocket();
  {
    ASSERT_TRUE(std::filesystem::remove(socket));
    ForeignServer foreign(socket);
    ASSERT_TRUE(foreign.ok());
    ASSERT_TRUE(serve_->WaitForLog("another server is answering on", 10s)) << serve_->Log();
  }  // closed: its socket file is now stale
  ASSERT_TRUE(kubelet_->WaitForResource(
      resource_, [](const auto& r) { return r.connected && r.registrations >= 2; }, 20s))
      << serve_->Log();
  auto preferred = Preferred(node_.GpuBdfs(), {}, 2);
  EXPECT_TRUE(preferred.ok()) << Describe(preferred.status);
  // The refusal is logged once, not on every retry.
  const std::string log = serve_->Log();
  std::size_t count = 0;
  for (auto at = log.find("another server is answering on"); at != std::string::npos;
       at = log.find("another server is answering on", at + 1)) {
    ++count;
  }
  EXPECT_LE(count, 2u) << log;
}

// Sockets are 0600 whatever the umask (only root's kubelet connects).
TEST_F(RuntimeBugsTest, SocketModeIs0600UnderUmask000) {
  Prepare({});
  const mode_t old = ::umask(0);
  StartServe();
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(OurSocket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << std::oct << (st.st_mode & 0777);
  // Also after serving again (kubelet restart).
  ASSERT_TRUE(std::filesystem::remove(OurSocket()));
  ASSERT_TRUE(kubelet_->WaitForResource(
      resource_, [](const auto& r) { return r.connected && r.registrations == 2; }, 15s));
  ASSERT_EQ(::stat(OurSocket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << std::oct << (st.st_mode & 0777);
}

}  // namespace
}  // namespace gfp::testing
