#include "plugin/core/log_scope.h"

#include <gtest/gtest.h>

namespace gfp::plugin::core {
namespace {

// alloc-1 holds partition 3 and is bound to vms/vm-a; alloc-2 waits for partition 4 to be
// activated; partition 7 is active with its owner released; partition 9 is being cleared for
// alloc-2.
sm::State AState() {
  sm::State s;
  sm::Allocation a1;
  a1.id = "alloc-1";
  a1.devices = {"0000:1b:00.0", "0000:43:00.0"};
  a1.status = sm::AllocationStatus::kBound;
  a1.partition = 3;
  a1.requested_at = 10;
  a1.pod_namespace = "vms";
  a1.pod_name = "vm-a";
  s.allocations[a1.id] = a1;
  sm::Allocation a2;
  a2.id = "alloc-2";
  a2.devices = {"0000:52:00.0"};
  a2.requested_at = 20;
  s.allocations[a2.id] = a2;
  s.active[3] = sm::ActivePartition{"alloc-1", false, 1, {}};
  s.active[7] = sm::ActivePartition{"", false, 1, {}};
  s.intents[4] = sm::PendingIntent{sm::IntentKind::kActivate, "alloc-2", 5, 20, {}};
  s.intents[9] = sm::PendingIntent{sm::IntentKind::kDeactivate, "alloc-2", 6, 20, {}};
  return s;
}

LogContext Context(std::string allocation, std::optional<std::uint32_t> partition,
                   std::string pod = "", std::string fm_code = "") {
  return LogContext{std::move(allocation), partition, std::move(pod), std::move(fm_code)};
}

TEST(LogScope, AllocationBringsItsPartitionAndPod) {
  ScopedLogContext scope;
  AddAllocation(scope, AState(), "alloc-1");
  EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 3, "vms/vm-a"));
}

TEST(LogScope, AnAllocationNoLongerInTheStateKeepsItsId) {
  ScopedLogContext scope;
  AddAllocation(scope, AState(), "alloc-99");
  EXPECT_EQ(CurrentLogContext(), Context("alloc-99", std::nullopt));
}

TEST(LogScope, PartitionNamesTheAllocationItsIntentIsFor) {
  const sm::State s = AState();
  {
    ScopedLogContext scope;
    AddPartition(scope, s, 4);
    EXPECT_EQ(CurrentLogContext(), Context("alloc-2", 4));
  }
  {
    ScopedLogContext scope;
    AddPartition(scope, s, 3);  // no intent: its owner
    EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 3, "vms/vm-a"));
  }
  {
    ScopedLogContext scope;
    AddPartition(scope, s, 7);  // ownerless
    EXPECT_EQ(CurrentLogContext(), Context("", 7));
  }
}

TEST(LogScope, PartitionWorkInsideAnAllocationsScopeStaysItsWork) {
  const sm::State s = AState();
  ScopedLogContext release;
  AddAllocation(release, s, "alloc-1");
  ScopedLogContext effect;
  AddPartition(effect, s, 7);  // not the owner's partition: still alloc-1's work
  EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 7, "vms/vm-a"));
  {
    ScopedLogContext other;
    AddAllocation(other, s, "alloc-2");
    ScopedLogContext owned;
    AddPartition(owned, s, 3);  // alloc-1's partition, touched in alloc-2's work
    EXPECT_EQ(CurrentLogContext().allocation_id, "alloc-2");
    EXPECT_EQ(CurrentLogContext().partition_id, 3u);
  }
  ScopedLogContext clearing;
  AddPartition(clearing, s, 9);  // cleared for alloc-2: its intent says whose work it is
  EXPECT_EQ(CurrentLogContext().allocation_id, "alloc-2");
  EXPECT_EQ(CurrentLogContext().partition_id, 9u);
}

TEST(LogScope, DevicesFindTheNewestLiveAllocationInAnyOrder) {
  sm::State s = AState();
  sm::Allocation older = s.allocations["alloc-1"];
  older.id = "alloc-0";
  older.requested_at = 1;
  older.pod_name = "old";
  s.allocations[older.id] = older;
  ScopedLogContext scope;
  AddAllocationOfDevices(scope, s, {"0000:43:00.0", "0000:1b:00.0"});
  EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 3, "vms/vm-a"));
  ScopedLogContext none;
  AddAllocationOfDevices(none, s, {"0000:43:00.0"});
  EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 3, "vms/vm-a"));  // unchanged
}

TEST(LogScope, EventFieldsAndFabricManagerCode) {
  const sm::State s = AState();
  events::Event failed;
  failed.mutable_partition_activation_failed()->set_partition_id(4);
  failed.mutable_partition_activation_failed()->set_allocation_id("alloc-2");
  failed.mutable_partition_activation_failed()->mutable_fm()->set_name("FM_ST_IN_USE");
  {
    ScopedLogContext scope;
    AddEvent(scope, s, failed);
    EXPECT_EQ(CurrentLogContext(), Context("alloc-2", 4, "", "FM_ST_IN_USE"));
  }
  events::Event bound;
  bound.mutable_allocation_bound()->set_allocation_id("alloc-5");
  bound.mutable_allocation_bound()->set_pod_namespace("vms");
  bound.mutable_allocation_bound()->set_pod_name("vm-z");
  {
    ScopedLogContext scope;
    AddEvent(scope, s, bound);
    EXPECT_EQ(CurrentLogContext(), Context("alloc-5", std::nullopt, "vms/vm-z"));
  }
  events::Event drift;
  drift.mutable_drift_detected()->set_partition_id(3);
  {
    ScopedLogContext scope;
    AddEvent(scope, s, drift);
    EXPECT_EQ(CurrentLogContext(), Context("alloc-1", 3, "vms/vm-a"));
  }
  ScopedLogContext scope;
  AddEvent(scope, s, events::Event{});  // no body: nothing
  EXPECT_TRUE(CurrentLogContext().empty());
}

}  // namespace
}  // namespace gfp::plugin::core
