#include "common/log_context.h"

#include <gtest/gtest.h>

#include <thread>

namespace gfp {
namespace {

TEST(ScopedLogContext, NestedScopesRestoreWhatWasThere) {
  EXPECT_TRUE(CurrentLogContext().empty());
  {
    ScopedLogContext outer;
    outer.AllocationId("alloc-1").Pod("vms", "vm-a");
    {
      ScopedLogContext inner;
      inner.PartitionId(4).FmCode("FM_ST_SUCCESS").AllocationId("alloc-2");
      EXPECT_EQ(CurrentLogContext().allocation_id, "alloc-2");
      EXPECT_EQ(CurrentLogContext().partition_id, 4u);
      EXPECT_EQ(CurrentLogContext().pod, "vms/vm-a");  // the outer scope's
      EXPECT_EQ(CurrentLogContext().fm_code, "FM_ST_SUCCESS");
    }
    LogContext expected;
    expected.allocation_id = "alloc-1";
    expected.pod = "vms/vm-a";
    EXPECT_EQ(CurrentLogContext(), expected);
  }
  EXPECT_TRUE(CurrentLogContext().empty());
}

TEST(ScopedLogContext, EmptyValuesLeaveTheFieldAsItWas) {
  ScopedLogContext outer;
  outer.AllocationId("alloc-1").FmCode("FM_ST_IN_USE").Pod("vms", "vm-a");
  ScopedLogContext inner;
  inner.AllocationId("").FmCode("").Pod("", "");
  EXPECT_EQ(CurrentLogContext().allocation_id, "alloc-1");
  EXPECT_EQ(CurrentLogContext().fm_code, "FM_ST_IN_USE");
  EXPECT_EQ(CurrentLogContext().pod, "vms/vm-a");
}

TEST(ScopedLogContext, EachThreadHasItsOwn) {
  ScopedLogContext scope;
  scope.AllocationId("alloc-1");
  bool other_empty = false;
  std::thread([&] { other_empty = CurrentLogContext().empty(); }).join();
  EXPECT_TRUE(other_empty);
  EXPECT_EQ(CurrentLogContext().allocation_id, "alloc-1");
}

}  // namespace
}  // namespace gfp
