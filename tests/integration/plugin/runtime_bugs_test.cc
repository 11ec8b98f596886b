// Run-time faults a hostile tester found (issue 8): sockets taken over or left world-writable,
// unbounded and unescaped refusals in the journal and the log, and misleading messages.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
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

// How often `needle` occurs in `text`.
std::size_t Occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// How many of `needles` occur in `text`.
std::size_t Occurrences(const std::string& text, const std::vector<std::string>& needles) {
  return std::count_if(needles.begin(), needles.end(),
                       [&](const std::string& n) { return text.find(n) != std::string::npos; });
}

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
  // Two retries of the serve loop (each logs the refusal again, at debug level).
  EXPECT_TRUE(WaitUntil(
      [&] {
        return Occurrences(serve_->Log(), "another server is answering on " + socket.string()) >= 3;
      },
      10s))
      << serve_->Log();
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

// A line of `text` that starts with `prefix` (a forged log or history line).
bool HasLineStartingWith(const std::string& text, const std::string& prefix) {
  std::size_t at = 0;
  while (at <= text.size()) {
    if (text.compare(at, prefix.size(), prefix) == 0) return true;
    const auto next = text.find('\n', at);
    if (next == std::string::npos) break;
    at = next + 1;
  }
  return false;
}

std::size_t HistoryBytes(const std::vector<nlohmann::json>& history) {
  std::size_t bytes = 0;
  for (const auto& e : history) bytes += e.dump().size() + 1;
  return bytes;
}

// A refused request of 3,000 IDs of 1,000 bytes once added 3 MB to the journal.
TEST_F(RuntimeBugsTest, HugeRefusedRequestAddsLittleToTheJournal) {
  Prepare({});
  StartServe();
  const std::size_t before = HistoryBytes(History());
  std::vector<std::string> ids;
  for (int i = 0; i < 3000; ++i) ids.push_back(std::to_string(i) + std::string(996, 'x'));
  auto outcome = Allocate({ids});
  EXPECT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status.error_message().find("is longer than 63 characters"), std::string::npos)
      << Describe(outcome.status);
  EXPECT_LT(outcome.status.error_message().size(), 2048u);
  const auto history = History();
  const std::size_t added = HistoryBytes(history) - before;
  EXPECT_LT(added, 4096u) << "the refusal added " << added << " bytes to the journal";
  bool saw_count = false;
  for (const auto& e : history) {
    if (e.value("type", "") == "AllocationRejected") {
      saw_count |= e.dump().find("2992 more IDs") != std::string::npos;
    }
  }
  EXPECT_TRUE(saw_count) << "the journal does not say how many IDs were left out";
  EXPECT_TRUE(serve_->Running());
  ExpectJournalVerifies();
}

// A newline in a kubelet-supplied ID must not forge a line in the log or in `journal history`.
TEST_F(RuntimeBugsTest, NewlineInAnIdForgesNoLine) {
  ServeSetup setup;
  setup.log_level = "debug";
  Prepare(setup);
  StartServe();
  const std::string forged = "FORGED [error] gpu-fabric-plugin was hacked";
  auto refused = Allocate({{node_.GpuBdfs()[0] + "\n" + forged}});
  EXPECT_FALSE(refused.ok());
  auto preferred = Preferred(node_.GpuBdfs(), {"0000:1b:00.0\n" + forged}, 2);
  EXPECT_FALSE(preferred.ok());
  auto prestart = PreStart({"0000:1b:00.0\n" + forged});
  EXPECT_FALSE(prestart.ok());
  EXPECT_FALSE(HasLineStartingWith(refused.status.error_message(), forged));
  // The last call's line is logged before its reply, so every line of the three calls is in.
  EXPECT_TRUE(serve_->WaitForLog("PreStartContainer for " + resource_ + ": ", 10s));
  EXPECT_FALSE(HasLineStartingWith(serve_->Log(), forged)) << serve_->Log();
  const auto text = Journal({"history"});
  EXPECT_FALSE(HasLineStartingWith(text.output, forged)) << text.output;
}

// FM not usable: GetPreferredAllocation says so instead of "no partition has 2 GPUs (sizes:)".
TEST_F(RuntimeBugsTest, PreferredSaysFabricManagerIsNotUsable) {
  Prepare({});
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  StartServe(false);
  auto preferred = Preferred(node_.GpuBdfs(), {}, 2);
  ASSERT_FALSE(preferred.ok());
  const std::string message = preferred.status.error_message();
  EXPECT_NE(message.find("Fabric Manager is not usable"), std::string::npos) << message;
  EXPECT_EQ(message.find("sizes:"), std::string::npos) << message;
}

// A mapped module id that FM's table does not have: warned about, and that GPU is Unhealthy.
TEST_F(RuntimeBugsTest, ModuleUnknownToFabricManagerIsUnhealthy) {
  Prepare({});
  const std::string victim = node_.GpuBdfs()[0];
  auto mapping = nlohmann::json::parse(ReadFileOrEmpty(node_.module_mapping_file));
  bool replaced = false;
  for (auto& [key, value] : mapping.items()) {
    std::string lower = key;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.ends_with(victim.substr(5))) {
      value = "99";
      replaced = true;
    }
  }
  ASSERT_TRUE(replaced) << mapping.dump();
  std::ofstream(node_.module_mapping_file, std::ios::trunc) << mapping.dump();
  StartServe(false);
  EXPECT_TRUE(WaitForDevices(
      [&](const auto& d) {
        for (const auto& device : d) {
          const bool want_healthy = device.id() != victim;
          if ((device.health() == "Healthy") != want_healthy) return false;
        }
        return d.size() == node_.gpus.size();
      },
      10s))
      << "only " << victim << " (module 99) must be Unhealthy";
  EXPECT_TRUE(serve_->WaitForLog("module 99", 5s)) << serve_->Log();
  const std::string log = serve_->Log();
  EXPECT_NE(log.find(victim + " is mapped to module 99"), std::string::npos) << log;
}

// --log-level=debug printed nothing more than info: each kubelet call, each reconcile decision
// and each FM effect now has a debug line.
TEST_F(RuntimeBugsTest, DebugLevelShowsKubeletCallsDecisionsAndFabricManagerEffects) {
  Prepare(
      {.release_grace = kShortReleaseGrace});  // --log-level=debug, reconcile 100ms, grace 300ms
  StartServe();
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  const auto held = admitted.response.containers[0].device_ids;
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound", [](const auto& e) { return e.dump().find("vm-a") != std::string::npos; },
      10s));
  ASSERT_TRUE(kubelet_->DeletePod("vms", "vm-a"));
  ASSERT_TRUE(WaitUntil([&] { return ActivePartitions().empty(); }, 10s));
  const std::string ids = "[" + held[0] + "," + held[1] + "]";
  const std::vector<std::string> lines = {
      "[debug] ListAndWatch " + resource_ + ": sent 8 devices (8 Healthy)",
      "[debug] GetPreferredAllocation " + resource_ + " size 2",
      "[debug] Allocate " + resource_ + " " + ids + ": ok in ",
      "[debug] PreStartContainer " + resource_ + " " + ids + ": ok in ",
      "[debug] Fabric Manager activate partition ",
      "[debug] journaled AllocationBound: ",
      "its devices are in no pod; release scheduled in 300 ms",
      "[debug] journaled AllocationReleased: ",
      "[debug] Fabric Manager deactivate partition ",
      "FM_ST_SUCCESS in ",
  };
  // The deactivation's lines follow FM's answer: wait for all of them, then say which is missing.
  WaitUntil([&] { return Occurrences(serve_->Log(), lines) == lines.size(); }, 10s);
  const std::string log = serve_->Log();
  for (const std::string& expected : lines) {
    EXPECT_NE(log.find(expected), std::string::npos) << "no debug line \"" << expected << "\"";
  }
}

}  // namespace
}  // namespace gfp::testing
