// serve --mode=dra as a hostile user and a hostile API server would treat it (issue 20, "Hostile
// inputs"; docs/bad-input.md, docs/security.md): malformed claims are refused one by one with
// the reason and no FM call; garbage, huge, endless and slow answers leave serve up, bounded and
// recovering; a missing or rotated token and a wrong CA are named and unprepare nothing; an
// unreachable API server unprepares nothing; bad flags and kubeconfigs exit before a journal
// exists; a foreign server on our sockets is never taken over.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "sim/apiserver/kubeconfig_writer.h"
#include "tests/common/sanitizer_build.h"
#include "tests/integration/dra/dra_world.h"

namespace gfp {
namespace {

// The RSS bounds hold for the product build; a sanitizer build's memory says nothing about them.
constexpr bool kSanitized = testing::kSanitizerBuild;

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Resident memory of `pid` in kB (VmRSS), -1 when unreadable.
long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

class DraHostileTest : public testing::DraWorldTest {
 protected:
  DraHostileTest() : DraWorldTest(200ms) {}

  // The one claim's Prepare error ("" when prepared).
  std::string PrepareError(const kubelet::DraClaim& claim) {
    auto prepared = world_->dra_kubelet().Prepare({claim});
    EXPECT_TRUE(prepared.ok()) << prepared.status.error_message();
    if (!prepared.ok() || !prepared.response.contains(claim.uid)) return "<no answer>";
    return prepared.response.at(claim.uid).error;
  }

  // Waits until serve's log holds `text` (serve exiting first is a failure).
  Status LogNamesWithin(const std::string& text, std::chrono::milliseconds timeout) {
    return simworld::ProcessWorld::Eventually(
        [&]() -> Status {
          if (Log().find(text) != std::string::npos) return Status::Ok();
          return Alive() ? Unavailable("the log does not name " + text) : Internal("serve exited");
        },
        timeout);
  }

  Status SliceBack(std::chrono::milliseconds timeout = 15s) {
    return simworld::ProcessWorld::Eventually(
        [&]() -> Status {
          if (!Alive()) return Internal("serve exited");
          return world_->api().Slices().size() == 1 ? Status::Ok() : Unavailable("no slice");
        },
        timeout);
  }

  // `journal verify` on the live journal: the chain holds.
  void ExpectJournalVerifies() {
    process::ProcessOptions o;
    o.binary = GFP_BINARY;
    o.args = {"journal", "verify", "--journal", world_->journal_path().string()};
    o.log_path = dir_.path() / "verify.log";
    auto child = process::ChildProcess::Start(std::move(o));
    ASSERT_TRUE(child.ok());
    EXPECT_EQ((*child)->Wait().ShellCode(), 0) << (*child)->Log();
  }

  // Every file serve made lies under the world's folder (the plugin folder, --cdi-dir, the
  // journal): nothing was written through a hostile name elsewhere.
  void ExpectNoFileNamed(const std::string& needle) {
    for (const auto& root : {fs::path("/tmp"), dir_.path().parent_path()}) {
      std::error_code ec;
      for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
           it.increment(ec)) {
        EXPECT_EQ(it->path().filename().string().find(needle), std::string::npos) << it->path();
      }
    }
  }
};

TEST_F(DraHostileTest, HostileClaimsAreRefusedOneByOneWithTheReasonAndNoFabricCall) {
  StartAndWait();
  const std::string huge(1 << 20, 'a');
  struct Case {
    std::string what;
    kubelet::DraClaim ref;
    std::string reason;  // in the answer's error
  };
  std::vector<Case> cases;
  cases.push_back({"1 MB name", {"uid-1", "default", huge}, "name"});
  cases.push_back({"1 MB namespace", {"uid-2", huge, "vm"}, "namespace"});
  cases.push_back({"../ in the name", {"uid-3", "default", "../../../etc/passwd"}, "name"});
  cases.push_back({"../ in the namespace", {"uid-4", "..", "vm"}, "namespace"});

  Json base = Allocate("vm-base", 2);
  auto stored_case = [&](const std::string& what, const std::string& name, const char* reason,
                         const std::function<void(Json&)>& edit) {
    Json claim = base;
    claim["metadata"]["name"] = name;
    edit(claim);
    cases.push_back({what, Ref(Store(claim)), reason});
  };
  stored_case("another pool", "vm-pool", "pool", [](Json& c) {
    c["status"]["allocation"]["devices"]["results"][0]["pool"] = "node-b";
  });
  stored_case("unknown device", "vm-device", "does not have", [](Json& c) {
    c["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-9999";
  });
  stored_case("5,000 results", "vm-many", "devices, more than", [](Json& c) {
    auto& results = c["status"]["allocation"]["devices"]["results"];
    const Json first = results[0];
    for (int i = 0; i < 5000; ++i) results.push_back(first);
  });
  stored_case("non-object status", "vm-status", "not allocated",
              [](Json& c) { c["status"] = "hostile"; });
  stored_case("1 MB consumer", "vm-consumer", "pod name is not a name", [&](Json& c) {
    c["status"]["reservedFor"] =
        Json::array({{{"resource", "pods"}, {"name", huge}, {"uid", "p"}}});
  });
  stored_case("1 MB request", "vm-request", "request name of GPU", [&](Json& c) {
    c["status"]["allocation"]["devices"]["results"][0]["request"] = huge;
  });
  {  // a uid that differs from the one kubelet names
    Json claim = base;
    claim["metadata"]["name"] = "vm-uid";
    kubelet::DraClaim ref = Ref(Store(claim));
    ref.uid = "not-the-stored-uid";
    cases.push_back({"uid differs", ref, "uid"});
  }

  for (const Case& c : cases) {
    const std::string error = PrepareError(c.ref);
    EXPECT_NE(error, "") << c.what;
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.what << ": " << error.substr(0, 300);
    EXPECT_LT(error.size(), 4096u) << c.what;
  }
  EXPECT_EQ(FmActivations(), 0);
  EXPECT_EQ(ActiveInFm(), 0u);
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
  EXPECT_TRUE(Alive()) << Log();
  // Bounded: no hostile megabyte reached the journal or the log.
  EXPECT_LT(fs::file_size(world_->journal_path()), 512u * 1024) << "journal grew";
  EXPECT_LT(fs::file_size(world_->log_path()), 512u * 1024) << "log grew";
  ExpectNoFileNamed("passwd");
  ExpectJournalVerifies();

  // A sound claim still prepares afterwards.
  const Json good = Store(Allocate("vm-good", 2));
  EXPECT_EQ(PrepareError(Ref(good)), "") << Log();
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
}

TEST_F(DraHostileTest, GarbageHugeEndlessAndSlowAnswersLeaveServeUpBoundedAndRecovering) {
  StartAndWait();
  const Json claim = Store(Allocate("vm-held", 2));
  ASSERT_EQ(PrepareError(Ref(claim)), "") << Log();
  const pid_t pid = world_->serve()->pid();
  auto& api = world_->api();
  using apisim::Fault;
  using apisim::FaultKind;
  const long baseline = RssKb(pid);
  long peak = baseline;
  auto sample = [&](std::chrono::milliseconds d) {
    for (auto until = std::chrono::steady_clock::now() + d;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(100ms)) {
      peak = std::max(peak, RssKb(pid));
    }
  };
  // An endless event (64 KiB every 10 ms) left running for 8 s: ~50 MB if it were buffered.
  api.AddFault(Fault{"watch", "resourceslices", FaultKind::kEndlessEvent, 200, 0ms, 1});
  api.CloseWatches();
  sample(8s);
  ASSERT_TRUE(Alive()) << Log();
  api.AddFault(Fault{"list", "resourceslices", FaultKind::kGarbage, 200, 0ms, 3});
  api.AddFault(Fault{"watch", "resourceslices", FaultKind::kHugeEvent, 200, 0ms, 2});
  api.AddFault(Fault{"watch", "resourceslices", FaultKind::kEndlessEvent, 200, 0ms, 2});
  api.AddFault(Fault{"*", "resourceslices", FaultKind::kSlowLoris, 200, 0ms, 2});
  api.AddFault(Fault{"create", "resourceslices", FaultKind::kGarbage, 200, 0ms, 2});
  for (int round = 0; round < 4; ++round) {
    EXPECT_EQ(api.WipeSlices("node-a") >= 0, true);
    api.CloseWatches();
    sample(2s);
    ASSERT_TRUE(Alive()) << Log();
  }
  if (!kSanitized) {  // ASan's shadow memory and its 256 MB quarantine of freed blocks
    EXPECT_LT(peak, 256 * 1024) << "RSS in kB under hostile answers";
    EXPECT_LT(peak - baseline, 32 * 1024) << "RSS growth in kB under hostile answers";
  }
  api.ClearFaults();
  api.WipeSlices("node-a");
  const Status back = SliceBack(20s);
  EXPECT_TRUE(back.ok()) << back.message() << "\n" << Log();
  EXPECT_EQ(ActiveInFm(), 1u) << "a hostile API server unprepared a claim";
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
  EXPECT_LT(fs::file_size(world_->log_path()), 2u * 1024 * 1024) << "log grew";
}

TEST_F(DraHostileTest, ARotatedTokenIsReadAgainWithoutARestart) {
  StartAndWait();
  const pid_t pid = world_->serve()->pid();
  const fs::path token = world_->dra_parts().token_file;
  {  // as kubelet rotates a projected token: a new file renamed over the old one
    std::ofstream out(token.string() + ".new");
    out << "world-token-2\n";
  }
  fs::rename(token.string() + ".new", token);
  world_->api().WipeSlices("node-a");
  const Status back = SliceBack();
  EXPECT_TRUE(back.ok()) << back.message() << "\n" << Log();
  const Json claim = Store(Allocate("vm-rotated", 2));
  EXPECT_EQ(PrepareError(Ref(claim)), "") << Log();
  EXPECT_EQ(world_->serve()->pid(), pid);
  EXPECT_TRUE(Alive());
}

TEST_F(DraHostileTest, AMissingTokenFileIsNamedAndUnpreparesNothing) {
  StartAndWait();
  const Json claim = Store(Allocate("vm-token", 2));
  ASSERT_EQ(PrepareError(Ref(claim)), "") << Log();
  const fs::path token = world_->dra_parts().token_file;
  fs::remove(token);
  world_->api().WipeSlices("node-a");
  world_->api().CloseWatches();
  const Status named = LogNamesWithin(token.string(), 15s);
  EXPECT_TRUE(named.ok()) << "the token file is not named\n" << Log();
  std::this_thread::sleep_for(1s);  // five more reconcile intervals without a token
  EXPECT_TRUE(Alive()) << Log();
  EXPECT_TRUE(world_->api().Slices().empty());
  EXPECT_EQ(ActiveInFm(), 1u);
  std::ofstream(token) << "world-token-1\n";
  const Status back = SliceBack();
  EXPECT_TRUE(back.ok()) << back.message() << "\n" << Log();
  EXPECT_EQ(ActiveInFm(), 1u);
}

TEST_F(DraHostileTest, AWrongCaIsNamedNeverTrustedAndUnpreparesNothing) {
  const fs::path api_dir = dir_.path() / "apiserver";
  ASSERT_TRUE(apisim::WriteKubeconfig(world_->setup().kubeconfig, world_->api().url(),
                                      api_dir / "other-ca.pem",
                                      {world_->dra_parts().token_file, {}, {}})
                  .ok());
  ASSERT_TRUE(world_->StartPlugin().ok());
  EXPECT_TRUE(LogNamesWithin("certificate", 15s).ok()) << Log();
  EXPECT_TRUE(Alive()) << Log();
  EXPECT_TRUE(world_->api().Slices().empty()) << "published through an untrusted certificate";
  EXPECT_NE(Log().find("127.0.0.1"), std::string::npos) << Log();
  EXPECT_EQ(ActiveInFm(), 0u);
}

TEST_F(DraHostileTest, AnUnreachableApiServerUnpreparesNothingHoweverLong) {
  StartAndWait();
  const Json claim = Store(Allocate("vm-kept", 4));
  ASSERT_EQ(PrepareError(Ref(claim)), "") << Log();
  ASSERT_EQ(ActiveInFm(), 1u);
  // The claim is gone from the API server, but serve cannot learn it: no definite answer.
  world_->api().AddFault({"*", "*", apisim::FaultKind::kDrop, 0, 0ms, -1});
  world_->api().DeleteClaim(claim["metadata"]["namespace"], claim["metadata"]["name"]);
  world_->api().CloseWatches();
  std::this_thread::sleep_for(4s);  // > release grace (600 ms) + 10 reconcile intervals
  EXPECT_TRUE(Alive()) << Log();
  EXPECT_EQ(ActiveInFm(), 1u) << "unprepared on no answer\n" << Log();
  EXPECT_TRUE(fs::exists(
      world_->setup().cdi_dir() /
      ("gpu-fabric-plugin.io_" + claim["metadata"]["uid"].get<std::string>() + ".json")));
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
}

// serve with `overrides`, run to its end (it must end within 10 s).
struct Ended {
  int code = -1;
  std::string log;
};

class DraFlagsTest : public DraHostileTest {
 protected:
  Ended Run(const std::map<std::string, std::string>& overrides) {
    process::ProcessOptions o;
    o.binary = GFP_BINARY;
    o.args = simworld::ServeArgs(world_->setup(), world_->node(), overrides);
    o.env = simworld::ServeEnv(world_->setup(), "node-a");
    o.log_path = dir_.path() / ("flags-" + std::to_string(++runs_) + ".log");
    auto child = process::ChildProcess::Start(std::move(o));
    EXPECT_TRUE(child.ok());
    if (!child.ok()) return {};
    auto status = (*child)->WaitForExit(10s);
    if (!status) {
      (*child)->Kill();
      return {-1, "did not end within 10 s: " + (*child)->Log()};
    }
    return {status->ShellCode(), (*child)->Log()};
  }
  int runs_ = 0;
};

TEST_F(DraFlagsTest, BadNamesAndModesExitTwoBeforeAnyJournal) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"--node-name", "Node_A!"}}, "node"},
      {{{"--node-name", std::string(300, 'a')}}, "node"},
      {{{"--dra-driver-name", std::string(64, 'd') + ".io"}}, "driver"},
      {{{"--dra-driver-name", "Not..A_Subdomain"}}, "driver"},
      {{{"--dra-driver-name", "../../etc"}}, "driver"},
      {{{"--mode", "foo"}}, "mode"},
  };
  for (const auto& [overrides, what] : cases) {
    const Ended ended = Run(overrides);
    EXPECT_EQ(ended.code, 2) << overrides.begin()->second.substr(0, 80) << ": " << ended.log;
    EXPECT_NE(ended.log.find(what), std::string::npos) << ended.log;
    EXPECT_FALSE(fs::exists(world_->journal_path())) << overrides.begin()->first;
  }
}

TEST_F(DraFlagsTest, BadKubeconfigsExitOneWithTheReasonBeforeAnyJournal) {
  const fs::path d = dir_.path() / "bad-kubeconfigs";
  fs::create_directories(d / "folder");
  ASSERT_EQ(mkfifo((d / "fifo").c_str(), 0600), 0);
  fs::create_directory_symlink(d / "folder", d / "link-to-folder");
  std::ofstream(d / "one-byte") << "a";
  std::ofstream(d / "unparsable") << "apiVersion: v1\nclusters: [\n  - {{{\n";
  std::ofstream(d / "exec")
      << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n"
         "    certificate-authority: " +
             (dir_.path() / "apiserver" / "ca.pem").string() +
             "\n"
             "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
             "users:\n- name: u\n  user:\n    exec:\n      command: /bin/true\n"
             "      apiVersion: client.authentication.k8s.io/v1\n";
  for (const char* name :
       {"missing", "fifo", "folder", "link-to-folder", "one-byte", "unparsable", "exec"}) {
    const Ended ended = Run({{"--kubeconfig", (d / name).string()}});
    EXPECT_EQ(ended.code, 1) << name << ": " << ended.log;
    EXPECT_NE(ended.log.find((d / name).string()), std::string::npos)
        << name << ": the kubeconfig is not named: " << ended.log;
    EXPECT_FALSE(fs::exists(world_->journal_path())) << name;
  }
  EXPECT_NE(Run({{"--kubeconfig", (d / "exec").string()}}).log.find("exec credential plugin"),
            std::string::npos);
}

// A foreign process already serving on one of our sockets: serve never takes it over.
TEST_F(DraHostileTest, AForeignServerOnOurSocketsIsNeverTakenOver) {
  for (const fs::path& socket_path :
       {world_->setup().kubelet_registry_dir() / "gpu-fabric-plugin.io-reg.sock",
        world_->setup().kubelet_plugins_dir() / "gpu-fabric-plugin.io" / "dra.sock"}) {
    SCOPED_TRACE(socket_path.string());
    fs::create_directories(socket_path.parent_path());
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(::listen(fd, 16), 0);
    struct stat before {};
    ASSERT_EQ(::stat(socket_path.c_str(), &before), 0);

    ASSERT_TRUE(world_->StartPlugin().ok());
    EXPECT_TRUE(LogNamesWithin(socket_path.string(), 15s).ok()) << Log();
    std::this_thread::sleep_for(1s);  // a retry that took the socket over would come in this time
    EXPECT_TRUE(Alive()) << Log();
    struct stat after {};
    ASSERT_EQ(::stat(socket_path.c_str(), &after), 0) << "our socket was removed";
    EXPECT_EQ(after.st_ino, before.st_ino) << "the foreign socket was replaced";
    const int client = ::socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0)
        << "the foreign server no longer answers";
    ::close(client);
    ASSERT_TRUE(world_->StopPlugin().ok());
    ::close(fd);
    fs::remove(socket_path);
  }
}

}  // namespace
}  // namespace gfp
