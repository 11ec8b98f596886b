// SlicePublisher on the real core (deterministic world): one slice per node, owned by the Node,
// republished with generation + 1 when the facts change, recreated after a wipe, taken back
// from someone else's edit, stale extras deleted, every publication journaled once.
#include "plugin/dra_mode/slice_publisher.h"

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

}  // namespace
}  // namespace gfp::plugin::dra_mode
