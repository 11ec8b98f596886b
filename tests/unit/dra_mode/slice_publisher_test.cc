// SlicePublisher on the real core (deterministic world): one slice per node, owned by the Node,
// republished with generation + 1 when the facts change, recreated after a wipe, taken back
// from someone else's edit, stale extras deleted, every publication journaled once; slices
// that are not ours left alone whatever the server returns; another writer noticed and backed
// off from; the DELETE's uid precondition over HTTPS against the fake API server.
#include "plugin/dra_mode/slice_publisher.h"

#include "plugin/dra_mode/http_kube_api.h"
#include "sim/apiserver/fake_api_server.h"
#include "sim/apiserver/test_pki.h"
#include "tests/unit/apiserver/log_capture.h"
#include "tests/unit/dra_mode/dra_world.h"

namespace gfp::plugin::dra_mode {
namespace {

class SlicePublisherTest : public DraWorldTest {
 protected:
  void SetUp() override {
    DraWorldTest::SetUp();
    publisher_ = std::make_unique<SlicePublisher>(
        world_->core(), api_, settings_,
        SliceHostFacts(world_->core().inventory(), world_->config().sysfs_root));
  }

  PublishResult Publish() {
    auto r = publisher_->Publish(std::nullopt);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : PublishResult{};
  }

  sm::ResourceSliceState Journaled() {
    return world_->core().engine().Read([](const sm::State& s) { return s.resource_slice; });
  }

  const Json& OnlySlice() {
    EXPECT_EQ(api_.slices.size(), 1u);
    return api_.slices.begin()->second;
  }

  std::unique_ptr<SlicePublisher> publisher_;
};

TEST_F(SlicePublisherTest, FirstPublicationCreatesOneOwnedSliceAndJournalsIt) {
  const PublishResult r = Publish();
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.generation, 1);
  const Json& slice = OnlySlice();
  EXPECT_EQ(slice["spec"]["nodeName"], "node-a");
  EXPECT_EQ(slice["spec"]["pool"]["name"], "node-a");
  EXPECT_EQ(slice["spec"]["pool"]["resourceSliceCount"], 1);
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["uid"], "node-uid");
  EXPECT_EQ(slice["spec"]["devices"].size(), world_->node().gpus.size());
  const sm::ResourceSliceState j = Journaled();
  EXPECT_EQ(j.name, slice["metadata"]["name"]);
  EXPECT_EQ(j.generation, 1);
  EXPECT_EQ(j.device_count, world_->node().gpus.size());
  EXPECT_EQ(j.devices_sha256, dra::DevicesSha256(slice["spec"]["devices"]));
}

TEST_F(SlicePublisherTest, NothingChangedWritesNothingAndJournalsNothing) {
  Publish();
  const int writes = api_.slice_writes;
  const auto last = world_->core().engine().journal().LastSeq();
  EXPECT_FALSE(Publish().written);
  EXPECT_EQ(api_.slice_writes, writes);
  EXPECT_EQ(world_->core().engine().journal().LastSeq(), last);
}

TEST_F(SlicePublisherTest, AnUnhealthyGpuLeavesTheSliceWithTheNextGeneration) {
  Publish();
  const std::string bdf = world_->node().gpus[0].bdf;
  ASSERT_TRUE(world_->node().RebindDriver(bdf, "nvidia").ok());
  world_->core().CheckHealth();
  const PublishResult r = Publish();
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.generation, 2);
  const Json& devices = OnlySlice()["spec"]["devices"];
  EXPECT_EQ(devices.size(), world_->node().gpus.size() - 1);
  for (const Json& d : devices) EXPECT_NE(d["name"], dra::DeviceName(bdf));
  EXPECT_EQ(Journaled().generation, 2);
  EXPECT_EQ(Journaled().device_count, world_->node().gpus.size() - 1);
}

TEST_F(SlicePublisherTest, AWipedSliceIsCreatedAgainWithAHigherGeneration) {
  Publish();
  api_.slices.clear();  // kubelet deletes the node's slices at its start
  const PublishResult r = Publish();
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.generation, 2);
  EXPECT_EQ(OnlySlice()["spec"]["pool"]["generation"], 2);
}

TEST_F(SlicePublisherTest, SomeoneElsesEditIsTakenBackAndStaleExtrasAreDeleted) {
  Publish();
  const std::string name = OnlySlice()["metadata"]["name"];
  api_.Touch(name, [](Json& s) { s["spec"]["devices"].erase(0); });
  Json extra = api_.slices.at(name);
  extra["metadata"]["name"] = "node-a-stale";
  extra["spec"]["pool"]["generation"] = 7;
  api_.slices["node-a-stale"] = extra;
  const PublishResult r = Publish();
  EXPECT_EQ(r.deleted, 1u);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.generation, 8);  // above every generation of the pool still in the API server
  EXPECT_EQ(OnlySlice()["metadata"]["name"], name);
  EXPECT_EQ(OnlySlice()["spec"]["devices"].size(), world_->node().gpus.size());
}

TEST_F(SlicePublisherTest, AStaleResourceVersionIsAConflictNotAnOverwrite) {
  Publish();
  const std::string name = OnlySlice()["metadata"]["name"];
  std::vector<Json> seen = {api_.slices.at(name)};
  seen[0]["spec"]["devices"] = Json::array();  // what the watch saw: changed, so it updates
  api_.Touch(name, [](Json&) {});              // meanwhile someone wrote it
  auto r = publisher_->Publish(seen);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kAlreadyExists);
}

TEST_F(SlicePublisherTest, AnUnreachableApiServerJournalsNothing) {
  api_.unreachable = true;
  EXPECT_FALSE(publisher_->Publish(std::nullopt).ok());
  EXPECT_EQ(Journaled(), sm::ResourceSliceState{});
}

// A slice of `driver` on `node` in pool `pool`, as another writer left it.
Json ForeignSlice(const std::string& name, const std::string& driver, const std::string& node,
                  const std::string& pool) {
  return {{"metadata", {{"name", name}, {"uid", name + "-uid"}, {"resourceVersion", "7"}}},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", pool}, {"generation", 9}, {"resourceSliceCount", 1}}},
            {"devices", Json::array({{{"name", "theirs"}}})}}}};
}

TEST_F(SlicePublisherTest, SlicesThatAreNotOursAreLeftAloneAndOursIsCreated) {
  adapters::apiserver::testing::LogCapture log;
  // An API server that ignores fieldSelector returns them all.
  const std::map<std::string, Json> foreign = {
      {"other-driver-node-a",
       ForeignSlice("other-driver-node-a", "other.example.com", "node-a", "node-a")},
      {"ours-node-b", ForeignSlice("ours-node-b", settings_.driver, "node-b", "node-b")},
      {"other-pool", ForeignSlice("other-pool", settings_.driver, "node-a", "node-a-extra")}};
  for (const auto& [name, slice] : foreign) api_.slices[name] = slice;
  const PublishResult r = Publish();
  EXPECT_EQ(r.deleted, 0u);
  EXPECT_EQ(r.foreign, 3u);
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.generation, 1);  // their generations are not our pool's
  EXPECT_TRUE(api_.deleted.empty());
  for (const auto& [name, slice] : foreign) EXPECT_EQ(api_.slices.at(name), slice) << name;
  ASSERT_EQ(api_.slices.size(), 4u);
  const std::string ours = Journaled().name;
  EXPECT_EQ(foreign.count(ours), 0u);
  EXPECT_EQ(api_.slices.at(ours)["spec"]["nodeName"], "node-a");
  // Warned once per foreign slice, not once per pass.
  Publish();
  EXPECT_EQ(log.Count("warning", "is not ours, yet the API server returned it: left alone"), 3);
  EXPECT_EQ(log.Count("warning", "ResourceSlice ours-node-b (driver"), 1);
}

TEST_F(SlicePublisherTest, AStaleSliceThatChangedSinceItWasSeenIsNotAFailedPass) {
  Publish();
  const std::string name = OnlySlice()["metadata"]["name"];
  Json stale = api_.slices.at(name);
  stale["metadata"]["name"] = "node-a-stale";
  stale["metadata"]["uid"] = "uid-as-seen";
  std::vector<Json> seen = {api_.slices.at(name), stale};
  stale["metadata"]["uid"] = "uid-recreated";  // someone re-created it meanwhile
  api_.slices["node-a-stale"] = stale;
  const int lists = api_.slice_lists;
  auto r = publisher_->Publish(seen);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(api_.slice_lists, lists + 1);  // relisted once, and saw it as it is now
  EXPECT_EQ(api_.deleted, std::vector<std::string>{"node-a-stale"});
  EXPECT_EQ(r->deleted, 1u);
  EXPECT_FALSE(r->relist);
}

// The other writer (a second plugin with our --node-name) puts its devices back after each of
// our passes; the service calls every 100 ms regardless of retry_after.
struct WarStats {
  std::vector<int> writes_per_minute;
  std::uint64_t journaled = 0;
  std::chrono::milliseconds longest_retry_after{0};
};

class AnotherWriterTest : public SlicePublisherTest {
 protected:
  WarStats War(int minutes) {
    WarStats stats;
    const auto seq = world_->core().engine().journal().LastSeq();
    const std::string name = Journaled().name;
    for (int minute = 0; minute < minutes; ++minute) {
      const int writes = api_.slice_writes;
      for (int tick = 0; tick < 600; ++tick) {
        stats.longest_retry_after = std::max(stats.longest_retry_after, Publish().retry_after);
        api_.Touch(name, [](Json& s) { s["spec"]["devices"] = Json::array({{{"name", "x"}}}); });
        world_->Advance(100'000);
      }
      stats.writes_per_minute.push_back(api_.slice_writes - writes);
    }
    stats.journaled = world_->core().engine().journal().LastSeq() - seq;
    return stats;
  }
};

TEST_F(AnotherWriterTest, RewritesAndJournalEventsStayBoundedAndItIsWarnedOnce) {
  adapters::apiserver::testing::LogCapture log;
  Publish();
  const WarStats stats = War(10);
  EXPECT_LE(stats.writes_per_minute[0], 12);
  for (int minute = 2; minute < 10; ++minute) {
    EXPECT_LE(stats.writes_per_minute[minute], 2) << "minute " << minute;
  }
  EXPECT_LE(stats.journaled, 11u);  // at most one generation-only event a minute
  EXPECT_EQ(stats.longest_retry_after, RewriteBackoff::kMaxHold);
  EXPECT_EQ(log.Count("warning",
                      "is being rewritten by another writer (another plugin instance "
                      "with --node-name node-a?)"),
            1);
}

TEST_F(AnotherWriterTest, OurOwnChangeIsWrittenAtOnceEvenWhileHolding) {
  Publish();
  War(2);
  const std::string bdf = world_->node().gpus[0].bdf;
  ASSERT_TRUE(world_->node().RebindDriver(bdf, "nvidia").ok());
  world_->core().CheckHealth();
  EXPECT_TRUE(Publish().written);
  EXPECT_EQ(OnlySlice()["spec"]["devices"].size(), world_->node().gpus.size() - 1);
  EXPECT_EQ(Journaled().device_count, world_->node().gpus.size() - 1);
}

TEST_F(AnotherWriterTest, WhenTheOtherWriterStopsAnEditIsTakenBackAtOnceAgain) {
  Publish();
  War(3);
  world_->Advance(2 * RewriteBackoff::kWindow);
  Publish();  // takes it back when the hold allows, then quiet
  world_->Advance(2 * RewriteBackoff::kWindow);
  EXPECT_EQ(Publish().retry_after.count(), 0);  // the episode is over
  const std::string name = Journaled().name;
  api_.Touch(name, [](Json& s) { s["spec"]["devices"] = Json::array(); });
  const PublishResult r = Publish();
  EXPECT_TRUE(r.written);
  EXPECT_EQ(r.retry_after.count(), 0);
}

// HttpKubeApi's DELETE against the fake API server over HTTPS: DeleteOptions' preconditions go
// with it, so a slice re-created under the same name is not deleted.
class SliceDeleteOverHttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = apisim::MakeTestPki(dir_.path() / "pki");
    ASSERT_TRUE(pki.ok()) << pki.status().message();
    apisim::FakeApiServer::Options options;
    options.pki = *pki;
    options.token = "token-1";
    auto server = apisim::FakeApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
    adapters::apiserver::ApiServerConfig config;
    config.server = server_->url();
    config.ca_pem = pki->ca_pem;
    config.auth = adapters::apiserver::AuthKind::kBearerToken;
    config.bearer_token = "token-1";
    config.source = "test config";
    auto client = adapters::apiserver::ApiClient::Create(config);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    api_ = std::make_unique<HttpKubeApi>(*client_);
  }

  Json Created(const std::string& name) {
    Json slice = ForeignSlice(name, "gpu-fabric-plugin.io", "node-a", "node-a");
    slice["metadata"] = {{"name", name}};
    auto created = api_->CreateSlice(slice);
    EXPECT_TRUE(created.ok()) << created.status().message();
    return created.ok() ? *created : Json();
  }

  gfp::testing::TempDir dir_;
  std::unique_ptr<apisim::FakeApiServer> server_;
  std::unique_ptr<adapters::apiserver::ApiClient> client_;
  std::unique_ptr<HttpKubeApi> api_;
};

TEST_F(SliceDeleteOverHttpsTest, AnotherUidIsAConflictAndTheSliceStays) {
  const Json slice = Created("node-a-x");
  const Status s = api_->DeleteSlice("node-a-x", "uid-of-an-older-one", "");
  EXPECT_EQ(s.code(), ErrorCode::kAlreadyExists) << s.message();
  EXPECT_NE(s.message().find("Precondition failed: UID in precondition"), std::string::npos)
      << s.message();
  ASSERT_EQ(server_->Slices().size(), 1u);
  const std::string rv = slice["metadata"]["resourceVersion"];
  const Status changed = api_->DeleteSlice("node-a-x", slice["metadata"]["uid"], rv + "0");
  EXPECT_EQ(changed.code(), ErrorCode::kAlreadyExists) << changed.message();
  EXPECT_EQ(server_->Slices().size(), 1u);
}

TEST_F(SliceDeleteOverHttpsTest, ItsOwnUidDeletesItAndGoneIsFine) {
  const Json slice = Created("node-a-x");
  ASSERT_TRUE(
      api_->DeleteSlice("node-a-x", slice["metadata"]["uid"], slice["metadata"]["resourceVersion"])
          .ok());
  EXPECT_TRUE(server_->Slices().empty());
  EXPECT_TRUE(api_->DeleteSlice("node-a-x", slice["metadata"]["uid"], "").ok());
}

}  // namespace
}  // namespace gfp::plugin::dra_mode
