// PluginCore::Allocate's contract for a pod of several containers (plugin_core.h): every
// container is validated before anything changes, but a container refused by Fabric Manager
// after the ones before it were granted fails the call while those stay granted; kubelet's retry
// of the same Allocate then supersedes them without a second FM call for their partitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "sim/world/deterministic_world.h"
#include "statemachine/state.h"

namespace gfp::simtest {
namespace {

struct Partition {
  sm::PartitionId id = 0;
  std::vector<std::string> gpus;
  std::uint32_t max_nvlinks = 0;
};

class AllocateContract : public ::testing::Test {
 protected:
  void SetUp() override {
    simworld::DeterministicOptions options;
    options.dir = dir_.path();
    auto world = simworld::DeterministicWorld::Create(options);
    ASSERT_TRUE(world.ok()) << world.status().message();
    world_ = std::move(world).value();
    ASSERT_TRUE(world_->StartPlugin().ok());
  }

  // Two 2-GPU partitions of the journal's table with no GPU in common (2-GPU partitions have
  // NVLinks that FM can lose; a 1-GPU partition has none).
  std::vector<Partition> DisjointPairs() {
    return world_->core().engine().Read([](const sm::State& s) {
      std::vector<Partition> out;
      for (const auto& [pid, p] : s.partitions) {
        auto devices = sm::DevicesOfPartition(s, p);
        if (!devices.missing_reason.empty() || devices.bdfs.size() != 2 || out.size() == 2) {
          continue;
        }
        const bool shares =
            !out.empty() &&
            std::any_of(devices.bdfs.begin(), devices.bdfs.end(), [&](const std::string& gpu) {
              return gpu == out[0].gpus[0] || gpu == out[0].gpus[1];
            });
        if (!shares) out.push_back({pid, devices.bdfs, p.max_nvlinks});
      }
      return out;
    });
  }

  std::size_t Activations() {
    auto log = world_->fm().CallLog();
    EXPECT_TRUE(log.ok());
    if (!log.ok()) return 0;
    return static_cast<std::size_t>(
        std::count_if(log->begin(), log->end(), [](const fmsim::CallRecord& call) {
          return call.function == "fmActivateFabricPartition";
        }));
  }

  testing::TempDir dir_;
  std::unique_ptr<simworld::DeterministicWorld> world_;
};

TEST_F(AllocateContract, ALaterContainerRefusedByFmLeavesTheEarlierGrantedAndTheRetrySupersedes) {
  const std::vector<Partition> pairs = DisjointPairs();
  ASSERT_EQ(pairs.size(), 2u);
  const Partition& first = pairs[0];
  const Partition& second = pairs[1];
  ASSERT_GT(second.max_nvlinks, 0u);
  // FM loses links on the second partition behind the plugin's back: the journal's table still
  // offers it, so the dry run passes, and FM refuses its activation.
  ASSERT_TRUE(world_->fm().Degrade(second.id, 0).ok());
  ASSERT_TRUE(world_->fm().ClearCallLog().ok());

  auto refused = world_->core().Allocate(world_->resource(), {first.gpus, second.gpus});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("container 1: "), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Activations(), 2u);
  world_->core().engine().Read([&](const sm::State& s) {
    EXPECT_TRUE(s.active.count(first.id)) << "container 0's partition stays active";
    EXPECT_FALSE(s.active.count(second.id));
    std::size_t granted = 0;
    for (const auto& [id, a] : s.allocations) {
      granted += a.status == sm::AllocationStatus::kGranted && a.partition == first.id;
    }
    EXPECT_EQ(granted, 1u) << "container 0 stays granted";
    return 0;
  });

  // FM recovers; kubelet retries the same Allocate.
  ASSERT_TRUE(world_->fm().Degrade(second.id, second.max_nvlinks).ok());
  ASSERT_TRUE(world_->core().SyncFabricManager());
  ASSERT_TRUE(world_->fm().ClearCallLog().ok());
  auto retried = world_->core().Allocate(world_->resource(), {first.gpus, second.gpus});
  ASSERT_TRUE(retried.ok()) << retried.status().message();
  EXPECT_EQ(Activations(), 1u) << "container 0's partition was active already: no FM call";
  world_->core().engine().Read([&](const sm::State& s) {
    std::size_t live = 0;
    for (const auto& [id, a] : s.allocations) live += a.live();
    EXPECT_EQ(live, 2u) << "the retry's two allocations; container 0's first one is superseded";
    EXPECT_TRUE(s.active.count(first.id));
    EXPECT_TRUE(s.active.count(second.id));
    return 0;
  });
}

}  // namespace
}  // namespace gfp::simtest
