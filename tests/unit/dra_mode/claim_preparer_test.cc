// ClaimPreparer against the deterministic world (the real core, journal and saga; the in-memory
// FM) with the API server behind a scripted KubeApi: one GET per first Prepare, none for a
// repeated one or an Unprepare; files written and removed; refusals before any FM call.
#include "plugin/dra_mode/claim_preparer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "plugin/dra/claim_file_store.h"
#include "plugin/dra/resource_slice.h"
#include "statemachine/claims.h"
#include "tests/common/claim_staging.h"
#include "tests/unit/apiserver/log_capture.h"
#include "tests/unit/dra_mode/dra_world.h"

namespace gfp::plugin::dra_mode {
namespace {

using Json = nlohmann::json;

using ClaimPreparerTest = DraWorldTest;

TEST_F(ClaimPreparerTest, FirstPrepareActivatesWritesFilesAndAnswersWithOneGet) {
  const std::uint32_t id = PartitionOfSize(4);
  const auto gpus = GpusOf(id);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", gpus);
  PrepareOutcome out = preparer_->Prepare({"u-1", "vms", "vm-a-gpus"});
  ASSERT_EQ(out.error, "");
  EXPECT_EQ(api_.claim_gets, 1);
  EXPECT_EQ(FmActive(), std::vector<std::uint32_t>{id});
  ASSERT_EQ(out.devices.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(out.devices[i].request, "gpu" + std::to_string(i));
    EXPECT_EQ(out.devices[i].pool, "node-a");
    EXPECT_EQ(out.devices[i].device_name, dra::DeviceName(gpus[i]));
    ASSERT_FALSE(out.devices[i].cdi_device_ids.empty());
    EXPECT_EQ(out.devices[i].cdi_device_ids[0],
              settings_.driver + "/gpu=u-1-" + dra::DeviceName(gpus[i]));
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(CdiSpec("u-1")));
  EXPECT_TRUE(std::filesystem::is_regular_file(settings_.dirs.plugin_dir / "dra-device-metadata" /
                                               "u-1" / "gpu0" / "metadata.json"));
}

TEST_F(ClaimPreparerTest, RepeatedPrepareNeitherFetchesNorActivatesAgainAndRepairsLostFiles) {
  const auto gpus = GpusOf(PartitionOfSize(2));
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", gpus);
  const PrepareOutcome first = preparer_->Prepare({"u-1", "vms", "vm-a-gpus"});
  ASSERT_EQ(first.error, "");
  ASSERT_EQ(FmActivations(), 1);
  std::filesystem::remove(CdiSpec("u-1"));
  api_.unreachable = true;  // a repeated Prepare needs no API server
  const PrepareOutcome again = preparer_->Prepare({"u-1", "vms", "vm-a-gpus"});
  ASSERT_EQ(again.error, "");
  EXPECT_EQ(api_.claim_gets, 1);
  EXPECT_EQ(FmActivations(), 1);
  EXPECT_TRUE(std::filesystem::is_regular_file(CdiSpec("u-1")));
  ASSERT_EQ(again.devices.size(), first.devices.size());
  for (std::size_t i = 0; i < again.devices.size(); ++i) {
    EXPECT_EQ(again.devices[i].cdi_device_ids, first.devices[i].cdi_device_ids);
  }
}

TEST_F(ClaimPreparerTest, ALostPartitionIsActivatedOnceMoreByARepeatedPrepare) {
  const std::uint32_t id = PartitionOfSize(2);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(id));
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  ASSERT_TRUE(world_->fm().DeactivateDirectly(id).ok());  // FM lost it; the journal has not seen
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  EXPECT_EQ(FmActive(), std::vector<std::uint32_t>{id});
}

TEST_F(ClaimPreparerTest, ClaimsThatCannotBePreparedHereAreRefusedBeforeAnyFmCall) {
  const auto gpus = GpusOf(PartitionOfSize(4));
  api_.claims["vms/other-uid"] = Claim("u-2", gpus, "other-uid");
  EXPECT_EQ(preparer_->Prepare({"u-1", "vms", "other-uid"}).error,
            "claim \"vms/other-uid\" has uid \"u-2\", not \"u-1\" (it was deleted and created "
            "again)");
  EXPECT_EQ(preparer_->Prepare({"u-3", "vms", "gone"}).error,
            "claim vms/gone (uid u-3) is not in the API server");
  // Three GPUs of a 4-GPU partition are no partition.
  api_.claims["vms/three"] = Claim("u-4", {gpus[0], gpus[1], gpus[2]}, "three");
  const std::string three = preparer_->Prepare({"u-4", "vms", "three"}).error;
  EXPECT_NE(three, "");
  // A body that names another claim than was asked for is not prepared under its own name.
  api_.claims["vms/asked"] = Claim("u-6", gpus, "someone-else");
  EXPECT_EQ(preparer_->Prepare({"u-6", "vms", "asked"}).error,
            "claim vms/asked (uid u-6): the API server answered an object named "
            "\"vms/someone-else\"; refused");
  api_.unreachable = true;
  EXPECT_EQ(preparer_->Prepare({"u-5", "vms", "x"}).error,
            "cannot read claim vms/x (uid u-5): connection refused");
  EXPECT_EQ(FmActivations(), 0);
  EXPECT_TRUE(FmActive().empty());
  EXPECT_FALSE(std::filesystem::exists(settings_.dirs.cdi_dir));
}

// The files of a first Prepare are staged while the saga commits and put in place after the
// grant: not written in place again, nothing left in the staging folder.
TEST_F(ClaimPreparerTest, AFirstPreparePublishesTheFilesItStaged) {
  std::filesystem::create_directories(settings_.dirs.cdi_dir);  // as serve runs: both folders
  std::filesystem::create_directories(settings_.dirs.plugin_dir);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(4)));
  adapters::apiserver::testing::LogCapture log;
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  EXPECT_EQ(log.Count("debug", "writing its files in place"), 0) << log.text();
  EXPECT_TRUE(std::filesystem::is_regular_file(CdiSpec("u-1")));
  EXPECT_TRUE(std::filesystem::is_regular_file(settings_.dirs.plugin_dir / "dra-device-metadata" /
                                               "u-1" / "gpu3" / "metadata.json"));
  // Nothing of the claim stays staged; empty spare folders for the next claim may be made.
  EXPECT_THAT(gfp::testing::LeftStaged(dra::ClaimStagingDir(settings_.dirs)), ::testing::IsEmpty());
}

// Staged files show nowhere before the claim is granted: a process that dies inside the FM
// activation leaves no CDI spec and no metadata folder, and kubelet's retry prepares the claim.
TEST_F(ClaimPreparerTest, AFirstPrepareShowsNoFileBeforeItsGrant) {
  std::filesystem::create_directories(settings_.dirs.cdi_dir);
  std::filesystem::create_directories(settings_.dirs.plugin_dir);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(4)));
  ASSERT_TRUE(
      world_->fm().CrashCaller("fmActivateFabricPartition", fmsim::CrashPoint::kAfter).ok());
  EXPECT_TRUE(world_->DiedDuring([&] { (void)preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}); }));
  EXPECT_TRUE(std::filesystem::is_empty(settings_.dirs.cdi_dir));
  EXPECT_FALSE(std::filesystem::exists(settings_.dirs.plugin_dir / "dra-device-metadata"));

  preparer_.reset();
  const Status started = world_->StartPlugin();
  ASSERT_TRUE(started.ok()) << started.message();
  preparer_ = std::make_unique<ClaimPreparer>(world_->core(), api_, settings_);
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  EXPECT_TRUE(std::filesystem::is_regular_file(CdiSpec("u-1")));
  EXPECT_TRUE(std::filesystem::is_regular_file(settings_.dirs.plugin_dir / "dra-device-metadata" /
                                               "u-1" / "gpu0" / "metadata.json"));
}

// A Prepare FM refuses leaves nothing of what was staged for it.
TEST_F(ClaimPreparerTest, ARefusedActivationLeavesNoStagedFile) {
  std::filesystem::create_directories(settings_.dirs.cdi_dir);
  std::filesystem::create_directories(settings_.dirs.plugin_dir);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(4)));
  ASSERT_TRUE(world_->fm()
                  .InjectFailure("fmActivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */, 1)
                  .ok());
  EXPECT_NE(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  EXPECT_TRUE(std::filesystem::is_empty(settings_.dirs.cdi_dir));
  EXPECT_FALSE(std::filesystem::exists(settings_.dirs.plugin_dir / "dra-device-metadata"));
  // Nothing of the claim stays staged; empty spare folders for the next claim may be made.
  EXPECT_THAT(gfp::testing::LeftStaged(dra::ClaimStagingDir(settings_.dirs)), ::testing::IsEmpty());
}

TEST_F(ClaimPreparerTest, UnprepareDeactivatesRemovesFilesAndIsIdempotent) {
  const std::uint32_t id = PartitionOfSize(4);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(id));
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  const int gets = api_.claim_gets;
  EXPECT_EQ(preparer_->Unprepare("u-1"), "");
  EXPECT_EQ(api_.claim_gets, gets);
  EXPECT_TRUE(FmActive().empty());
  EXPECT_FALSE(std::filesystem::exists(CdiSpec("u-1")));
  EXPECT_FALSE(std::filesystem::exists(settings_.dirs.plugin_dir / "dra-device-metadata" / "u-1"));
  EXPECT_EQ(preparer_->Unprepare("u-1"), "");
  EXPECT_EQ(preparer_->Unprepare("never-seen"), "");
  world_->core().engine().Read([&](const sm::State& s) {
    EXPECT_EQ(sm::ClaimProgressOf(s, "u-1"), sm::ClaimProgress::kUnknown);
    return 0;
  });
}

TEST_F(ClaimPreparerTest, ARefusedDeactivationIsAnErrorAndTheNextUnprepareFinishes) {
  const std::uint32_t id = PartitionOfSize(2);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(id));
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  ASSERT_TRUE(world_->fm()
                  .InjectFailure("fmDeactivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */, 1)
                  .ok());
  EXPECT_NE(preparer_->Unprepare("u-1"), "");
  EXPECT_TRUE(std::filesystem::exists(CdiSpec("u-1")));
  EXPECT_EQ(preparer_->Unprepare("u-1"), "");
  EXPECT_TRUE(FmActive().empty());
  EXPECT_FALSE(std::filesystem::exists(CdiSpec("u-1")));
}

// A node upgraded from the layout keyed by <namespace>_<name>: the claim's Unprepare removes its
// folder there too (its metadata names the claim's uid), not only the uid's.
TEST_F(ClaimPreparerTest, UnprepareRemovesTheEarlierLayoutsFolderOfTheClaim) {
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(2)));
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  const auto old_folder = settings_.dirs.plugin_dir / "dra-device-metadata" / "vms_vm-a-gpus";
  std::filesystem::create_directories(old_folder / "gpu0");
  std::ofstream(old_folder / "gpu0" / "metadata.json") << R"({"metadata":{"uid":"u-1"}})";
  ASSERT_EQ(preparer_->Unprepare("u-1"), "");
  EXPECT_FALSE(std::filesystem::exists(old_folder));
}

}  // namespace
}  // namespace gfp::plugin::dra_mode
