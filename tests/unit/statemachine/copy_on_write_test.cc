// The partition table is shared between copies of the state: a change to one copy must never
// show in another, and equality must still compare contents.
#include "statemachine/copy_on_write.h"

#include <gtest/gtest.h>

#include <map>

#include "statemachine/state.h"

namespace gfp::sm {
namespace {

TEST(CopyOnWrite, AChangeToOneCopyNeverShowsInAnother) {
  State original;
  original.partitions.mutable_value()[1] = PartitionState{1, {1, 2}, 12, 12, false};
  State copy = original;
  EXPECT_EQ(&original.partitions.value(), &copy.partitions.value()) << "copies share the table";

  copy.partitions.mutable_value()[1].nvlinks_available = 4;
  copy.partitions.mutable_value()[2] = PartitionState{2, {3}, 0, 0, false};
  EXPECT_EQ(original.partitions.at(1).nvlinks_available, 12u);
  EXPECT_EQ(original.partitions.count(2), 0u);
  EXPECT_EQ(copy.partitions.at(1).nvlinks_available, 4u);
  EXPECT_FALSE(original == copy);
}

TEST(CopyOnWrite, EqualityComparesContentsNotSharing) {
  State a;
  State b;
  a.partitions = std::map<PartitionId, PartitionState>{{1, PartitionState{1, {1}, 0, 0, false}}};
  b.partitions = std::map<PartitionId, PartitionState>{{1, PartitionState{1, {1}, 0, 0, false}}};
  EXPECT_NE(&a.partitions.value(), &b.partitions.value());
  EXPECT_TRUE(a == b);
  b.partitions.mutable_value()[1].unsupported = true;
  EXPECT_FALSE(a == b);
}

TEST(CopyOnWrite, TheOnlyHolderChangesInPlace) {
  State alone;
  alone.partitions.mutable_value()[1] = PartitionState{1, {1}, 0, 0, false};
  const auto* before = &alone.partitions.value();
  alone.partitions.mutable_value()[1].unsupported = true;
  EXPECT_EQ(before, &alone.partitions.value());
}

}  // namespace
}  // namespace gfp::sm
