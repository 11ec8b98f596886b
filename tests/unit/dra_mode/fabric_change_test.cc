// A change of FM's partition table that the core journals (here a partition turning degraded)
// wakes whoever waits on the device view, so DRA mode's slice is republished within SPEC §11's
// second even on an idle node, where nothing else would bump the change counter.
#include "tests/unit/dra_mode/dra_world.h"

namespace gfp::plugin::dra_mode {
namespace {

using FabricChangeTest = DraWorldTest;

TEST_F(FabricChangeTest, APartitionTurningDegradedWakesTheSlice) {
  auto& core = world_->core();
  ASSERT_TRUE(core.SyncFabricManager());
  const std::uint64_t before = core.version();
  ASSERT_TRUE(core.SyncFabricManager());
  EXPECT_EQ(core.version(), before) << "an unchanged table is no change";
  ASSERT_TRUE(world_->fm().Degrade(PartitionOfSize(2), 0).ok());
  ASSERT_TRUE(core.SyncFabricManager());
  EXPECT_NE(core.version(), before) << "the degraded partition did not wake the slice";
}

}  // namespace
}  // namespace gfp::plugin::dra_mode
