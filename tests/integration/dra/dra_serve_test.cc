// serve --mode=dra end to end (SPEC §11): the real binary registers with the fake kubelet's DRA
// side, publishes its slice to the fake API server over HTTPS, prepares a claim the stand-in
// scheduler allocated (one GET), writes its files, unprepares it (no API call), recreates a wiped
// slice, and keeps a prepared claim across a SIGKILL without activating twice.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "sim/world/claim_scheduler.h"
#include "sim/world/process_world.h"
#include "tests/common/temp_dir.h"

namespace gfp {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class DraServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    simworld::ProcessWorldOptions options;
    options.dir = dir_.path();
    options.fm_library = GFP_SIM_LIBRARY;
    options.plugin_binary = GFP_BINARY;
    // One reconciliation at start and none after: its GETs of prepared claims would otherwise
    // be counted with the calls' own (SPEC §11 counts them apart).
    options.reconcile_interval = 1h;
    options.release_grace = 600ms;
    options.node_name = "node-a";
    options.dra = true;
    auto created = simworld::ProcessWorld::Create(options);
    ASSERT_TRUE(created.ok()) << created.status().message();
    world_ = std::move(created).value();
    ASSERT_TRUE(world_->StartPlugin().ok());
    const Status ready = world_->WaitDraRegisteredAndPublished();
    ASSERT_TRUE(ready.ok()) << ready.message() << "\n" << Log();
  }

  std::string Log() const {
    std::ifstream in(world_->log_path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // The stand-in scheduler allocates an fm-<n>gpu claim; the API server stores it.
  Json ScheduleClaim(const std::string& name, std::size_t n) {
    simworld::ClaimRequest request;
    request.name = name;
    request.gpus = n;
    request.pod = "virt-launcher-" + name;
    auto claim = scheduler_.Allocate(request, world_->api().Slices());
    EXPECT_TRUE(claim.ok()) << claim.status().message();
    auto stored = world_->api().PutClaim(*claim);
    EXPECT_TRUE(stored.ok()) << stored.status().message();
    return *stored;
  }

  kubelet::DraClaim Ref(const Json& claim) {
    return {claim["metadata"]["uid"], claim["metadata"]["namespace"], claim["metadata"]["name"]};
  }

  int FmActivations() {
    auto log = world_->fabric().CallLog();
    EXPECT_TRUE(log.ok());
    int n = 0;
    for (const auto& call : *log)
      n += call.function == "fmActivateFabricPartition" && call.code == 0;
    return n;
  }

  testing::TempDir dir_;
  std::unique_ptr<simworld::ProcessWorld> world_;
  simworld::ClaimScheduler scheduler_{"gpu-fabric-plugin.io", "node-a"};
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

}  // namespace
}  // namespace gfp
