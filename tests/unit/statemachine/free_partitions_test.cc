// Free partitions by size: the number behind gpu_fabric_partitions_free and the NFD labels.
// Expected counts are worked out by hand from the H100 table in sm_fixtures.h.
#include "statemachine/free_partitions.h"

#include <gtest/gtest.h>

#include "common/sm_fixtures.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::Modules;
using Counts = std::map<std::size_t, std::size_t>;

TEST(FreePartitions, AFreeH100NodeHasEveryPartition) {
  Driver d;
  d.Boot(gfp::testing::H100Node());
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 8}, {2, 4}, {4, 2}, {8, 1}}));
  EXPECT_EQ(LargestFreePartition(FreePartitionsBySize(d.state)), 8u);
}

TEST(FreePartitions, AnAllocationTakesEveryPartitionSharingItsGpus) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  // Partition 3 = modules {1, 3}: breaks partitions 0 and 1 and two single-GPU partitions.
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 6}, {2, 3}, {4, 1}, {8, 0}}));
  EXPECT_EQ(LargestFreePartition(FreePartitionsBySize(d.state)), 4u);
}

TEST(FreePartitions, UnhealthyGpusAndDegradedPartitionsAreNotFree) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  d.Run(ObserveDeviceHealth{d.now, Modules(node, {8})[0], false, "/dev/vfio/17 removed"});
  // Module 8 is in partitions 0, 2, 6 and 14.
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 7}, {2, 3}, {4, 1}, {8, 0}}));

  auto table = gfp::testing::PartitionsOf(node);
  for (auto& p : table) {
    if (p.id() == 1) p.set_nvlinks_available(p.max_nvlinks() - 1);  // modules 1-4, degraded
  }
  ObserveFabricState observed;
  observed.now = d.now;
  observed.partitions = table;
  d.Run(observed);
  EXPECT_EQ(FreePartitionsBySize(d.state), (Counts{{1, 7}, {2, 3}, {4, 0}, {8, 0}}));
  EXPECT_EQ(LargestFreePartition(FreePartitionsBySize(d.state)), 2u);
}

TEST(FreePartitions, NoneWithoutFabricManagerOrBeforeItsTable) {
  Driver without_fm;
  without_fm.Boot(gfp::testing::H100Node(), /*fm=*/false);
  EXPECT_TRUE(FreePartitionsBySize(without_fm.state).empty());
  EXPECT_EQ(LargestFreePartition({}), 0u);
  EXPECT_EQ(LargestFreePartition(Counts{{1, 0}, {2, 0}}), 0u);
}

}  // namespace
}  // namespace gfp::sm
