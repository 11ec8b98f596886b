// serve --mode=dra end to end (SPEC §11): the real binary registers with the fake kubelet's DRA
// side, publishes its slice to the fake API server over HTTPS, prepares a claim the stand-in
// scheduler allocated (one GET), writes its files, unprepares it (no API call), recreates a wiped
// slice, keeps a prepared claim across a SIGKILL without activating twice, and clears at start
// what a killed Prepare had staged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/common/claim_staging.h"
#include "tests/integration/dra/dra_world.h"

namespace gfp {
namespace {

using namespace std::chrono_literals;

class DraServeTest : public testing::DraWorldTest {
 protected:
  // One reconciliation at start and none after: its GETs of prepared claims would otherwise be
  // counted with the calls' own (SPEC §11 counts them apart).
  DraServeTest() : DraWorldTest(1h) {}

  void SetUp() override {
    DraWorldTest::SetUp();
    if (HasFatalFailure()) return;
    StartAndWait();
  }
};

TEST_F(DraServeTest, PublishesOneOwnedSliceOfEveryGpu) {
  const auto slices = world_->api().Slices();
  ASSERT_EQ(slices.size(), 1u);
  const Json& slice = slices[0];
  EXPECT_EQ(slice["spec"]["nodeName"], "node-a");
  EXPECT_EQ(slice["spec"]["driver"], "gpu-fabric-plugin.io");
  EXPECT_EQ(slice["spec"]["devices"].size(), world_->node().gpus.size());
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["uid"], world_->dra_parts().node_uid);
}

TEST_F(DraServeTest, PreparesWithOneGetAndUnpreparesWithNone) {
  const Json claim = ScheduleClaim("vm-a-gpus", 4);
  world_->api().ClearRequests();
  auto prepared = world_->dra_kubelet().Prepare({Ref(claim)});
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  const auto& answer = prepared.response.at(claim["metadata"]["uid"]);
  ASSERT_EQ(answer.error, "") << Log();
  EXPECT_EQ(answer.devices.size(), 4u);
  EXPECT_EQ(world_->api().CallCount("get", "resourceclaims"), 1);
  EXPECT_EQ(world_->api().CallCount("create", "resourceslices") +
                world_->api().CallCount("update", "resourceslices"),
            0);
  const std::string uid = claim["metadata"]["uid"];
  EXPECT_TRUE(std::filesystem::is_regular_file(world_->setup().cdi_dir() /
                                               ("gpu-fabric-plugin.io_" + uid + ".json")));
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
  auto active = world_->FabricActive();
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->size(), 1u);

  world_->api().ClearRequests();
  auto unprepared = world_->dra_kubelet().Unprepare({Ref(claim)});
  ASSERT_TRUE(unprepared.ok());
  EXPECT_EQ(unprepared.response.at(uid).error, "");
  EXPECT_EQ(world_->api().CallCount("get", "resourceclaims"), 0);
  EXPECT_FALSE(std::filesystem::exists(world_->setup().cdi_dir() /
                                       ("gpu-fabric-plugin.io_" + uid + ".json")));
  active = world_->FabricActive();
  ASSERT_TRUE(active.ok());
  EXPECT_TRUE(active->empty());
}

// kube-apiserver keeps connections alive, and a new TLS connection per claim GET would cost a
// Prepare more than the rest of its plugin work: Prepares one after another share one.
TEST_F(DraServeTest, ClaimGetsOfSuccessivePreparesShareOneConnection) {
  const Json a = ScheduleClaim("vm-a-gpus", 2);
  const Json b = ScheduleClaim("vm-b-gpus", 2);
  world_->api().ClearRequests();
  for (const Json* claim : {&a, &b}) {
    auto prepared = world_->dra_kubelet().Prepare({Ref(*claim)});
    ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
    ASSERT_EQ(prepared.response.at((*claim)["metadata"]["uid"]).error, "") << Log();
  }
  std::vector<int> ports;
  for (const auto& request : world_->api().Requests()) {
    if (request.verb == "get" && request.resource == "resourceclaims") {
      ports.push_back(request.client_port);
    }
  }
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0], ports[1]) << "the second claim GET opened a new connection";
}

TEST_F(DraServeTest, AWipedSliceIsRecreatedWithinFiveSeconds) {
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(world_->api().WipeSlices("node-a"), 1);
  const Status back = simworld::ProcessWorld::Eventually(
      [&]() -> Status {
        return world_->api().Slices().size() == 1 ? Status::Ok() : Unavailable("no slice");
      },
      5s);
  EXPECT_TRUE(back.ok()) << back.message() << "\n" << Log();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 5s);
}

TEST_F(DraServeTest, APreparedClaimSurvivesAKillAndIsNeverActivatedTwice) {
  const Json claim = ScheduleClaim("vm-b-gpus", 2);
  auto first = world_->dra_kubelet().Prepare({Ref(claim)});
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first.response.at(claim["metadata"]["uid"]).error, "") << Log();
  ASSERT_EQ(FmActivations(), 1);
  ASSERT_TRUE(world_->CrashPlugin().ok());
  world_->api().ClearRequests();
  ASSERT_TRUE(world_->StartPlugin().ok());
  world_->dra_kubelet().Forget();
  ASSERT_TRUE(world_->WaitDraRegisteredAndPublished().ok()) << Log();
  // The start-up reconciliation GETs the prepared claim once; count only what Prepare does.
  ASSERT_TRUE(simworld::ProcessWorld::Eventually([&]() -> Status {
                return world_->api().CallCount("get", "resourceclaims") >= 1
                           ? Status::Ok()
                           : Unavailable("no start-up reconciliation yet");
              }).ok())
      << Log();
  world_->api().ClearRequests();
  auto again = world_->dra_kubelet().Prepare({Ref(claim)});
  ASSERT_TRUE(again.ok());
  const auto& answer = again.response.at(claim["metadata"]["uid"]);
  EXPECT_EQ(answer.error, "");
  EXPECT_EQ(answer.devices.size(), 2u);
  EXPECT_EQ(world_->api().CallCount("get", "resourceclaims"), 0);
  EXPECT_EQ(FmActivations(), 1);
  EXPECT_TRUE(world_->FabricMatchesJournal().ok());
}

// A Prepare killed while its files were staged (dra::StagedClaimFiles) leaves a half-built
// metadata folder in the plugin's staging folder; the next start removes it before serving.
TEST_F(DraServeTest, WhatAKilledPrepareStagedIsClearedAtTheNextStart) {
  ASSERT_TRUE(world_->CrashPlugin().ok());
  const std::filesystem::path staging =
      world_->setup().kubelet_plugins_dir() / world_->setup().dra_driver / ".claim-staging";
  std::filesystem::create_directories(staging / "claim.k1lLed" / "gpu0");
  std::ofstream(staging / "claim.k1lLed" / "gpu0" / "metadata.json") << "{}";
  ASSERT_TRUE(world_->StartPlugin().ok());
  ASSERT_TRUE(world_->WaitDraRegisteredAndPublished().ok()) << Log();
  // Only what the stager made ahead for the next Prepare is there: empty spare folders.
  EXPECT_THAT(gfp::testing::LeftStaged(staging), ::testing::IsEmpty()) << Log();
  EXPECT_FALSE(std::filesystem::exists(staging / "claim.k1lLed")) << Log();
  // And a first Prepare stages and publishes again.
  const Json claim = ScheduleClaim("vm-c-gpus", 2);
  auto prepared = world_->dra_kubelet().Prepare({Ref(claim)});
  ASSERT_TRUE(prepared.ok());
  EXPECT_EQ(prepared.response.at(claim["metadata"]["uid"]).error, "") << Log();
  EXPECT_THAT(gfp::testing::LeftStaged(staging), ::testing::IsEmpty());
}

}  // namespace
}  // namespace gfp
