// apply() is total: events that make no sense are recorded as anomalies, never crash, never
// corrupt the state.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::H100Node;

events::Event At(std::int64_t t) {
  events::Event e;
  e.set_time_unix_micros(t);
  return e;
}

TEST(Apply, NonsenseEventsBecomeAnomaliesAndChangeNothingElse) {
  Driver d;
  d.Boot(H100Node());
  const State before = d.state;
  std::vector<events::Event> nonsense;
  {
    auto e = At(5);
    e.mutable_allocation_granted()->set_allocation_id("alloc-999");
    nonsense.push_back(e);
  }
  {
    auto e = At(6);
    e.mutable_partition_deactivated()->set_partition_id(3);
    nonsense.push_back(e);
  }
  {
    auto e = At(7);
    e.mutable_partition_activation_requested()->set_partition_id(4242);
    nonsense.push_back(e);
  }
  {
    auto e = At(8);
    e.mutable_device_health_changed()->set_bdf("0000:00:00.0");
    nonsense.push_back(e);
  }
  nonsense.push_back(At(9));  // no body at all
  {
    auto e = At(10);
    e.mutable_drift_detected()->set_partition_id(3);
    e.mutable_drift_detected()->set_kind(events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY);
    nonsense.push_back(e);
  }
  for (int kind : {0, 99}) {  // unspecified, and a kind this build does not know
    auto e = At(11);
    e.mutable_drift_detected()->set_partition_id(3);
    e.mutable_drift_detected()->set_kind(static_cast<events::DriftDetected::Kind>(kind));
    nonsense.push_back(e);
  }
  d.Commit(nonsense);
  EXPECT_EQ(d.state.anomaly_count, before.anomaly_count + nonsense.size());
  State expected = before;
  expected.last_seq = d.state.last_seq;
  expected.anomaly_count = d.state.anomaly_count;
  expected.recent_anomalies = d.state.recent_anomalies;
  EXPECT_EQ(d.state, expected);
  EXPECT_TRUE(std::any_of(
      d.state.recent_anomalies.begin(), d.state.recent_anomalies.end(),
      [](const Anomaly& a) { return a.description.find("without a body") != std::string::npos; }));
  for (const char* kind : {"unknown kind 0", "unknown kind 99"}) {
    EXPECT_TRUE(std::any_of(
        d.state.recent_anomalies.begin(), d.state.recent_anomalies.end(),
        [&](const Anomaly& a) { return a.description.find(kind) != std::string::npos; }))
        << kind;
  }
}

// A journaled kind number this build does not know reads as passthrough (journals written
// before kinds existed have 0); each known number maps to its kind.
TEST(Apply, DeviceKindOfEveryJournaledNumber) {
  EXPECT_EQ(DeviceKindOf(0), DeviceKind::kPciPassthrough);
  EXPECT_EQ(DeviceKindOf(1), DeviceKind::kMdev);
  EXPECT_EQ(DeviceKindOf(2), DeviceKind::kVgpuVf);
  EXPECT_EQ(DeviceKindOf(3), DeviceKind::kPciPassthrough);
  EXPECT_EQ(DeviceKindOf(-1), DeviceKind::kPciPassthrough);
}

// The gap alone: a valid event (one that is no anomaly at the next seq) journaled at a seq that
// skips one is recorded as exactly one anomaly naming both seqs.
TEST(Apply, SeqGapIsAnAnomaly) {
  auto restart = [](std::int64_t t) {
    auto e = At(t);
    e.mutable_kubelet_restart_observed()->set_reason("socket removed");
    return e;
  };
  State s;
  Apply(s, 1, restart(1));
  ASSERT_EQ(s.anomaly_count, 0u);
  Apply(s, 3, restart(2));
  EXPECT_EQ(s.last_seq, 3u);
  EXPECT_EQ(s.kubelet_restarts, 2u);  // the event itself still counts
  ASSERT_EQ(s.anomaly_count, 1u);
  EXPECT_EQ(s.recent_anomalies.back().seq, 3u);
  EXPECT_EQ(s.recent_anomalies.back().description, "event seq 3 follows seq 1");
}

TEST(Apply, LifecyclesOnlyMoveForward) {
  Driver d;
  auto node = H100Node();
  d.Boot(node, false);
  Decision granted = d.Run(d.Request(node.resource, gfp::testing::Modules(node, {1})));
  auto again = At(d.now);
  again.mutable_allocation_granted()->set_allocation_id(granted.allocation_id);
  const auto anomalies = d.state.anomaly_count;
  d.Commit({again});
  EXPECT_EQ(d.state.anomaly_count, anomalies + 1);
  EXPECT_EQ(d.state.allocations.at(granted.allocation_id).status, AllocationStatus::kGranted);
}

TEST(Apply, RecentAnomaliesAreBounded) {
  State s;
  for (int i = 1; i <= 40; ++i) Apply(s, static_cast<std::uint64_t>(i), At(i));
  EXPECT_EQ(s.anomaly_count, 40u);
  EXPECT_EQ(s.recent_anomalies.size(), State::kMaxRecentAnomalies);
  EXPECT_EQ(s.recent_anomalies.back().seq, 40u);
}

TEST(Apply, AllocationIdCounterFollowsTheJournal) {
  State s;
  auto e = At(1);
  e.mutable_allocation_requested()->set_allocation_id("alloc-41");
  Apply(s, 1, e);
  EXPECT_EQ(s.next_allocation_number, 42u);
  EXPECT_EQ(AllocationIdFor(s.next_allocation_number), "alloc-42");
}

}  // namespace
}  // namespace gfp::sm
