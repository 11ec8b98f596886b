// DraServer (SPEC §11 "Registration (kubelet)", NodePrepare/NodeUnprepareResources) against the
// fake kubelet's DRA side over real gRPC on Unix sockets, with a scripted DraHandler behind it.
#include "plugin/rpc/dra_server.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "plugin/rpc/unix_socket_server.h"
#include "pluginregistration/v1/api.grpc.pb.h"
#include "sim/kubelet/fake_dra_kubelet.h"

namespace gfp::plugin::rpc {
namespace {

namespace fs = std::filesystem;
using kubelet::DraAnswers;
using kubelet::DraClaim;
using kubelet::FakeDraKubelet;

constexpr char kDriver[] = "gpu.fabric.example.com";
constexpr auto kDeadline = std::chrono::milliseconds(2000);

// Records every call; answers from a script keyed by claim uid (default: ok, no devices).
class ScriptedHandler final : public DraHandler {
 public:
  DraPrepareAnswer Prepare(const DraClaimRef& claim) override {
    std::lock_guard lock(mu_);
    prepared_.push_back(claim);
    return prepare_answers_[claim.uid];
  }
  std::string Unprepare(const DraClaimRef& claim) override {
    std::lock_guard lock(mu_);
    unprepared_.push_back(claim);
    return unprepare_errors_[claim.uid];
  }
  void RegistrationStatus(bool registered, const std::string& error) override {
    std::lock_guard lock(mu_);
    statuses_.emplace_back(registered, error);
  }

  void ScriptPrepare(const std::string& uid, DraPrepareAnswer answer) {
    std::lock_guard lock(mu_);
    prepare_answers_[uid] = std::move(answer);
  }
  void ScriptUnprepare(const std::string& uid, std::string error) {
    std::lock_guard lock(mu_);
    unprepare_errors_[uid] = std::move(error);
  }
  std::vector<std::string> PreparedUids() const { return Uids(prepared_); }
  std::vector<std::string> UnpreparedUids() const { return Uids(unprepared_); }
  std::vector<DraClaimRef> Prepared() const {
    std::lock_guard lock(mu_);
    return prepared_;
  }
  std::vector<std::pair<bool, std::string>> Statuses() const {
    std::lock_guard lock(mu_);
    return statuses_;
  }

 private:
  std::vector<std::string> Uids(const std::vector<DraClaimRef>& claims) const {
    std::lock_guard lock(mu_);
    std::vector<std::string> uids;
    for (const auto& claim : claims) uids.push_back(claim.uid);
    return uids;
  }

  mutable std::mutex mu_;
  std::vector<DraClaimRef> prepared_, unprepared_;
  std::vector<std::pair<bool, std::string>> statuses_;
  std::map<std::string, DraPrepareAnswer> prepare_answers_;
  std::map<std::string, std::string> unprepare_errors_;
};

DraClaim Claim(const std::string& uid, const std::string& name = "vm-gpus") {
  return {uid, "tenant-a", name};
}

class DraServerTest : public ::testing::Test {
 protected:
  fs::path registry() const { return dir_.path() / "registry"; }
  fs::path plugins() const { return dir_.path() / "plugins"; }
  fs::path dra_sock() const { return plugins() / kDriver / "dra.sock"; }
  fs::path reg_sock() const { return registry() / (std::string(kDriver) + "-reg.sock"); }

  // Serves and registers with the fake kubelet.
  void ServeAndRegister() {
    ASSERT_TRUE(server_.Serve().ok());
    const Status discovered = kubelet_.Discover(kDriver, kDeadline);
    ASSERT_TRUE(discovered.ok()) << discovered.message();
  }

  gfp::testing::TempDir dir_;
  ScriptedHandler handler_;
  DraServer server_{handler_, kDriver, registry(), plugins()};
  FakeDraKubelet kubelet_{registry()};
};

unsigned ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(DraServerTest, DraRegistersWithExactInfo) {
  ServeAndRegister();
  ASSERT_TRUE(kubelet_.info().has_value());
  const pluginregistration::PluginInfo info = *kubelet_.info();
  EXPECT_EQ(info.type(), "DRAPlugin");
  EXPECT_EQ(info.name(), kDriver);
  EXPECT_EQ(info.endpoint(), fs::absolute(dra_sock()).string());
  ASSERT_EQ(info.supported_versions_size(), 1);
  EXPECT_EQ(info.supported_versions(0), "v1.DRAPlugin");
  EXPECT_TRUE(server_.registered());
  const std::vector<std::pair<bool, std::string>> expected = {{true, ""}};
  EXPECT_EQ(handler_.Statuses(), expected);
}

TEST_F(DraServerTest, DraRefusedRegistrationReachesTheHandler) {
  ASSERT_TRUE(server_.Serve().ok());
  fs::remove(dra_sock());  // the endpoint kubelet dials after GetInfo is gone
  const Status discovered = kubelet_.Discover(kDriver, std::chrono::milliseconds(300));
  EXPECT_FALSE(discovered.ok());
  EXPECT_FALSE(server_.registered());
  const auto statuses = handler_.Statuses();
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_FALSE(statuses[0].first);
  EXPECT_NE(statuses[0].second.find("endpoint"), std::string::npos) << statuses[0].second;
}

TEST_F(DraServerTest, DraEachClaimGetsItsOwnAnswerInOrder) {
  ServeAndRegister();
  DraDevice gpu{{"gpu0"}, "node-1", "gpu-0000-1b-00-0", {"gpu.fabric.example.com/gpu=a-gpu-0"}};
  handler_.ScriptPrepare("uid-a", {{gpu}, ""});
  handler_.ScriptPrepare("uid-b", {{}, "partition 3 is degraded"});
  const auto prepared = kubelet_.Prepare({Claim("uid-a"), Claim("uid-b"), Claim("uid-c")});
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  ASSERT_EQ(prepared.response.size(), 3u);
  const kubelet::DraDeviceAnswer expected_device{gpu.request_names, gpu.pool_name, gpu.device_name,
                                                 gpu.cdi_device_ids};
  ASSERT_EQ(prepared.response.at("uid-a").devices.size(), 1u);
  EXPECT_EQ(prepared.response.at("uid-a").devices[0], expected_device);
  EXPECT_EQ(prepared.response.at("uid-a").error, "");
  EXPECT_EQ(prepared.response.at("uid-b").error, "partition 3 is degraded");
  EXPECT_TRUE(prepared.response.at("uid-b").devices.empty());
  EXPECT_EQ(prepared.response.at("uid-c").error, "");
  EXPECT_EQ(handler_.PreparedUids(), (std::vector<std::string>{"uid-a", "uid-b", "uid-c"}));
  EXPECT_EQ(handler_.Prepared()[0].namespace_name, "tenant-a");
  EXPECT_EQ(handler_.Prepared()[0].name, "vm-gpus");

  handler_.ScriptUnprepare("uid-b", "FM refused to deactivate partition 3");
  const auto unprepared = kubelet_.Unprepare({Claim("uid-b"), Claim("uid-a")});
  ASSERT_TRUE(unprepared.ok()) << unprepared.status.error_message();
  ASSERT_EQ(unprepared.response.size(), 2u);
  EXPECT_EQ(unprepared.response.at("uid-b").error, "FM refused to deactivate partition 3");
  EXPECT_EQ(unprepared.response.at("uid-a").error, "");
  EXPECT_EQ(handler_.UnpreparedUids(), (std::vector<std::string>{"uid-b", "uid-a"}));
}

TEST_F(DraServerTest, DraMalformedClaimsAreRefusedWithoutReachingTheHandler) {
  ServeAndRegister();
  const std::string huge_uid(1 << 20, 'a');
  const std::vector<DraClaim> claims = {
      {huge_uid, "tenant-a", "x"},
      {"uid/../../etc", "tenant-a", "x"},
      {"", "tenant-a", "x"},
      {"uid-ns", "Tenant_A", "x"},
      {"uid-ns-long", std::string(64, 'n'), "x"},
      {"uid-name", "tenant-a", std::string(254, 'n')},
      {"uid-name-nl", "tenant-a", "vm\nforged log line"},
      Claim("uid-good"),
  };
  const auto prepared = kubelet_.Prepare(claims);
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  ASSERT_EQ(prepared.response.size(), claims.size());
  const std::map<std::string, std::string> field = {
      {huge_uid, "claim uid"},       {"uid/../../etc", "claim uid"},     {"", "claim uid"},
      {"uid-ns", "claim namespace"}, {"uid-ns-long", "claim namespace"}, {"uid-name", "claim name"},
      {"uid-name-nl", "claim name"}};
  for (const auto& [uid, what] : field) {
    const std::string& error = prepared.response.at(uid).error;
    EXPECT_NE(error.find(what), std::string::npos) << uid.substr(0, 20) << ": " << error;
    EXPECT_LT(error.size(), 400u) << "the refused value is cut in the error";
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_EQ(prepared.response.at("uid-good").error, "");
  EXPECT_EQ(handler_.PreparedUids(), std::vector<std::string>{"uid-good"});

  const auto unprepared = kubelet_.Unprepare(claims);
  ASSERT_TRUE(unprepared.ok()) << unprepared.status.error_message();
  EXPECT_NE(unprepared.response.at("uid-ns").error.find("claim namespace"), std::string::npos);
  EXPECT_EQ(handler_.UnpreparedUids(), std::vector<std::string>{"uid-good"});
}

TEST_F(DraServerTest, DraTooManyClaimsInOneCallReachNoHandler) {
  ServeAndRegister();
  std::vector<DraClaim> claims;
  for (std::size_t i = 0; i < kMaxClaimsPerRequest; ++i)
    claims.push_back(Claim("u" + std::to_string(i)));
  ASSERT_TRUE(kubelet_.Prepare(claims).ok());
  EXPECT_EQ(handler_.PreparedUids().size(), kMaxClaimsPerRequest);

  claims.push_back(Claim("one-more"));
  const auto prepared = kubelet_.Prepare(claims);
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  ASSERT_EQ(prepared.response.size(), claims.size());
  EXPECT_NE(prepared.response.at("one-more").error.find("claims"), std::string::npos);
  EXPECT_NE(prepared.response.at("u0").error.find("more than 128"), std::string::npos);
  EXPECT_EQ(handler_.PreparedUids().size(), kMaxClaimsPerRequest) << "nothing more handled";
  ASSERT_TRUE(kubelet_.Unprepare(claims).ok());
  EXPECT_TRUE(handler_.UnpreparedUids().empty());
}

TEST_F(DraServerTest, DraRepeatedUidIsHandledAndAnsweredOnce) {
  ServeAndRegister();
  const auto prepared =
      kubelet_.Prepare({Claim("uid-a", "first"), Claim("uid-b"), Claim("uid-a", "second")});
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  EXPECT_EQ(prepared.response.size(), 2u);
  EXPECT_EQ(handler_.PreparedUids(), (std::vector<std::string>{"uid-a", "uid-b"}));
  EXPECT_EQ(handler_.Prepared()[0].name, "first");
  ASSERT_TRUE(kubelet_.Unprepare({Claim("uid-a"), Claim("uid-a")}).ok());
  EXPECT_EQ(handler_.UnpreparedUids(), std::vector<std::string>{"uid-a"});
}

TEST_F(DraServerTest, DraSocketsAreOnlyRootsAndTheDriverDirIs0750) {
  ASSERT_TRUE(server_.Serve().ok());
  EXPECT_EQ(ModeOf(dra_sock()), 0600u);
  EXPECT_EQ(ModeOf(reg_sock()), 0600u);
  EXPECT_EQ(ModeOf(dra_sock().parent_path()), 0750u);
  EXPECT_EQ(server_.dra_socket_path(), dra_sock());
  EXPECT_EQ(server_.registration_socket_path(), reg_sock());
}

// A registration server answering GetInfo with whatever the test says; keeps the notices.
class BogusRegistration final : public pluginregistration::Registration::Service {
 public:
  explicit BogusRegistration(pluginregistration::PluginInfo info) : info_(std::move(info)) {}
  grpc::Status GetInfo(grpc::ServerContext*, const pluginregistration::InfoRequest*,
                       pluginregistration::PluginInfo* response) override {
    *response = info_;
    return grpc::Status::OK;
  }
  grpc::Status NotifyRegistrationStatus(grpc::ServerContext*,
                                        const pluginregistration::RegistrationStatus* request,
                                        pluginregistration::RegistrationStatusResponse*) override {
    std::lock_guard lock(mu_);
    notices_.push_back(*request);
    return grpc::Status::OK;
  }
  std::vector<pluginregistration::RegistrationStatus> notices() const {
    std::lock_guard lock(mu_);
    return notices_;
  }

 private:
  const pluginregistration::PluginInfo info_;
  mutable std::mutex mu_;
  std::vector<pluginregistration::RegistrationStatus> notices_;
};

// A foreign live server on `path`: serving, and it must still be there afterwards.
void ExpectNeverTakenOver(DraServer& server, const fs::path& path) {
  BogusRegistration service({});
  UnixSocketServer foreign("a second plugin", path);
  ASSERT_TRUE(foreign.Serve({&service}).ok());
  const auto before = IdentityOf(path);
  const Status served = server.Serve();
  EXPECT_EQ(served.code(), ErrorCode::kAlreadyExists) << served.message();
  EXPECT_NE(served.message().find(path.string()), std::string::npos) << served.message();
  EXPECT_EQ(IdentityOf(path), before) << "the live socket was replaced";
  EXPECT_TRUE(SocketIsLive(path));
  EXPECT_FALSE(foreign.SocketLost());
  server.Stop();
  EXPECT_EQ(IdentityOf(path), before) << "Stop removed a socket that is not ours";
}

TEST_F(DraServerTest, DraLiveForeignDraSocketIsNeverTakenOver) {
  fs::create_directories(dra_sock().parent_path());
  ExpectNeverTakenOver(server_, dra_sock());
  EXPECT_FALSE(fs::exists(reg_sock())) << "registered an endpoint we do not serve";
}

TEST_F(DraServerTest, DraLiveForeignRegistrationSocketIsNeverTakenOver) {
  fs::create_directories(registry());
  ExpectNeverTakenOver(server_, reg_sock());
}

TEST_F(DraServerTest, DraSocketLostWhenEitherFileIsRemovedOrReplaced) {
  ASSERT_TRUE(server_.Serve().ok());
  EXPECT_FALSE(server_.SocketLost());
  fs::remove(reg_sock());
  EXPECT_TRUE(server_.SocketLost());
  server_.Stop();
  ASSERT_TRUE(server_.Serve().ok());
  EXPECT_FALSE(server_.SocketLost());
  fs::remove(dra_sock());
  std::ofstream(dra_sock()) << "kubelet wiped and something else came";
  EXPECT_TRUE(server_.SocketLost());
}

TEST_F(DraServerTest, DraStopRemovesOnlyOurFilesAndForgetsRegistration) {
  ServeAndRegister();
  ASSERT_TRUE(server_.registered());
  // Someone replaced dra.sock; the registration socket is still ours.
  fs::remove(dra_sock());
  std::ofstream(dra_sock()) << "not ours";
  const fs::path neighbour = registry() / "other-driver-reg.sock";
  std::ofstream(neighbour) << "not ours either";
  server_.Stop();
  EXPECT_FALSE(server_.registered());
  EXPECT_FALSE(fs::exists(reg_sock()));
  EXPECT_TRUE(fs::exists(dra_sock()));
  EXPECT_TRUE(fs::exists(neighbour));
  EXPECT_TRUE(fs::is_directory(dra_sock().parent_path()));

  // Served again (the stale file is no socket: refused), then again once it is gone.
  EXPECT_EQ(server_.Serve().code(), ErrorCode::kFailedPrecondition);
  fs::remove(dra_sock());
  ServeAndRegister();
  EXPECT_TRUE(server_.registered());
  ASSERT_TRUE(kubelet_.Prepare({Claim("uid-a")}).ok());
  EXPECT_EQ(handler_.Statuses().size(), 2u);
}

// The fake kubelet refuses what kubelet refuses, and says so to the plugin.
TEST_F(DraServerTest, DraFakeKubeletRefusesWrongPluginInfo) {
  ASSERT_TRUE(server_.Serve().ok());  // a real endpoint to name
  const std::string endpoint = fs::absolute(dra_sock()).string();
  const std::string bogus_driver = "bogus.example.com";
  struct Case {
    std::string type, name, endpoint, version, expected;
  };
  const std::vector<Case> cases = {
      {"CSIPlugin", bogus_driver, endpoint, "v1.DRAPlugin", "plugin type"},
      {"DRAPlugin", "other.example.com", endpoint, "v1.DRAPlugin", "plugin name"},
      {"DRAPlugin", bogus_driver, "dra.sock", "v1.DRAPlugin", "absolute"},
      {"DRAPlugin", bogus_driver, endpoint, "v1beta1.DRAPlugin", "v1.DRAPlugin"},
  };
  for (const Case& c : cases) {
    pluginregistration::PluginInfo info;
    info.set_type(c.type);
    info.set_name(c.name);
    info.set_endpoint(c.endpoint);
    info.add_supported_versions(c.version);
    BogusRegistration bogus(info);
    const fs::path socket = registry() / (bogus_driver + "-reg.sock");
    UnixSocketServer registration("bogus registration", socket);
    ASSERT_TRUE(registration.Serve({&bogus}).ok());
    const Status discovered = kubelet_.Discover(bogus_driver, kDeadline);
    EXPECT_EQ(discovered.code(), ErrorCode::kFailedPrecondition) << c.expected;
    EXPECT_NE(discovered.message().find(c.expected), std::string::npos) << discovered.message();
    EXPECT_FALSE(kubelet_.registered());
    const auto notices = bogus.notices();
    ASSERT_EQ(notices.size(), 1u) << c.expected;
    EXPECT_FALSE(notices[0].plugin_registered());
    EXPECT_NE(notices[0].error().find(c.expected), std::string::npos) << notices[0].error();
  }
}

}  // namespace
}  // namespace gfp::plugin::rpc
