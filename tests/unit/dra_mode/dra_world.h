// A deterministic world (the real core, journal and saga; the in-memory FM) with DRA mode's
// settings below a temporary folder and the API server behind ScriptedApi: the fixture of DRA
// mode's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "plugin/dra/resource_slice.h"
#include "plugin/dra_mode/claim_preparer.h"
#include "sim/world/deterministic_world.h"
#include "tests/common/temp_dir.h"
#include "tests/unit/dra_mode/scripted_api.h"

namespace gfp::plugin::dra_mode {

using Json = nlohmann::json;

class DraWorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    simworld::DeterministicOptions options;
    options.dir = dir_.path() / "world";
    std::filesystem::create_directories(options.dir);
    options.check_invariants_after_execute = true;
    options.dra = true;
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

}  // namespace gfp::plugin::dra_mode
