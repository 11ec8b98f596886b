// ClaimPreparer against the deterministic world (the real core, journal and saga; the in-memory
// FM) with the API server behind a scripted KubeApi: one GET per first Prepare, none for a
// repeated one or an Unprepare; files written and removed; refusals before any FM call.
#include "plugin/dra_mode/claim_preparer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "plugin/dra/resource_slice.h"
#include "sim/world/deterministic_world.h"
#include "statemachine/claims.h"
#include "tests/common/temp_dir.h"

namespace gfp::plugin::dra_mode {
namespace {

using Json = nlohmann::json;

class ScriptedApi : public KubeApi {
 public:
  std::map<std::string, Json> claims;  // "ns/name" -> object
  bool unreachable = false;
  int claim_gets = 0;

  Result<std::optional<Json>> GetClaim(const std::string& ns, const std::string& name) override {
    ++claim_gets;
    if (unreachable) return Unavailable("connection refused");
    auto it = claims.find(ns + "/" + name);
    if (it == claims.end()) return std::optional<Json>();
    return std::optional<Json>(it->second);
  }
  Result<std::string> GetNodeUid(const std::string&) override { return std::string("node-uid"); }
  Result<SliceList> ListSlices(const std::string&, const std::string&) override {
    return SliceList{};
  }
  Result<Json> CreateSlice(const Json& s) override { return s; }
  Result<Json> UpdateSlice(const Json& s) override { return s; }
  Status DeleteSlice(const std::string&) override { return Status::Ok(); }
};

class ClaimPreparerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    simworld::DeterministicOptions options;
    options.dir = dir_.path() / "world";
    std::filesystem::create_directories(options.dir);
    options.check_invariants_after_execute = true;
    auto world = simworld::DeterministicWorld::Create(options);
    ASSERT_TRUE(world.ok()) << world.status().message();
    world_ = std::move(world).value();
    ASSERT_TRUE(world_->StartPlugin().ok());
    settings_.node = "node-a";
    settings_.dirs = {dir_.path() / "cdi", dir_.path() / "plugins" / settings_.driver};
    settings_.dev_root = world_->config().dev_root;
    preparer_ = std::make_unique<ClaimPreparer>(world_->core(), api_, settings_);
  }

  // The BDFs of FM's partition `id`, from the node as built (the judge's view).
  std::vector<std::string> GpusOf(std::uint32_t id) const {
    const auto modules = world_->FmPartitionModules(id);
    std::vector<std::string> out;
    for (const auto& gpu : world_->node().gpus) {
      if (modules.count(gpu.module_id)) out.push_back(gpu.bdf);
    }
    return out;
  }

  // The first partition of FM's table with `size` GPUs.
  std::uint32_t PartitionOfSize(std::size_t size) const {
    for (std::uint32_t id = 0; id < 64; ++id) {
      if (world_->FmPartitionModules(id).size() == size) return id;
    }
    ADD_FAILURE() << "no partition of size " << size;
    return 0;
  }

  Json Claim(const std::string& uid, const std::vector<std::string>& bdfs,
             const std::string& name = "vm-a-gpus") {
    Json results = Json::array();
    for (std::size_t i = 0; i < bdfs.size(); ++i) {
      results.push_back({{"request", "gpu" + std::to_string(i)},
                         {"driver", settings_.driver},
                         {"pool", "node-a"},
                         {"device", dra::DeviceName(bdfs[i])}});
    }
    return {{"metadata", {{"namespace", "vms"}, {"name", name}, {"uid", uid}}},
            {"status",
             {{"allocation", {{"devices", {{"results", results}}}}},
              {"reservedFor", Json::array({{{"resource", "pods"}, {"name", "launcher"}}})}}}};
  }

  std::vector<std::uint32_t> FmActive() {
    auto active = world_->fm().ActivePartitions();
    EXPECT_TRUE(active.ok());
    return active.ok() ? *active : std::vector<std::uint32_t>{};
  }

  int FmActivations() {
    auto log = world_->fm().CallLog();
    EXPECT_TRUE(log.ok());
    return static_cast<int>(std::count_if(log->begin(), log->end(), [](const auto& c) {
      return c.function == "fmActivateFabricPartition";
    }));
  }

  std::filesystem::path CdiSpec(const std::string& uid) const {
    return settings_.dirs.cdi_dir / (settings_.driver + "_" + uid + ".json");
  }

  gfp::testing::TempDir dir_;
  std::unique_ptr<simworld::DeterministicWorld> world_;
  ScriptedApi api_;
  DraSettings settings_;
  std::unique_ptr<ClaimPreparer> preparer_;
};

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
                                               "vms_vm-a-gpus" / "gpu0" / "metadata.json"));
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
  ASSERT_TRUE(world_->fm().DeactivateDirectly(id).ok());
  ASSERT_TRUE(world_->core().SyncFabricManager());
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
  api_.unreachable = true;
  EXPECT_EQ(preparer_->Prepare({"u-5", "vms", "x"}).error,
            "cannot read claim vms/x (uid u-5): connection refused");
  EXPECT_EQ(FmActivations(), 0);
  EXPECT_TRUE(FmActive().empty());
  EXPECT_FALSE(std::filesystem::exists(settings_.dirs.cdi_dir));
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
  EXPECT_FALSE(
      std::filesystem::exists(settings_.dirs.plugin_dir / "dra-device-metadata" / "vms_vm-a-gpus"));
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

}  // namespace
}  // namespace gfp::plugin::dra_mode
