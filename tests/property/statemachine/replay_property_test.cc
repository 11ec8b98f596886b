// Properties of the pure core over random scenarios (rapidcheck prints the seed to reproduce a
// failure: RC_PARAMS="seed=<n>"):
//  - invariants hold after every apply (checked by the Driver);
//  - replaying the journal from nothing gives the live state;
//  - every transaction-boundary prefix replays to the live state at that boundary (what a crash
//    between transactions leaves behind);
//  - snapshot at any point + tail replay equals full replay;
//  - decide() is deterministic.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "scenario.h"
#include "statemachine/recovery.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::NodeFixture;

NodeFixture AnyNode(int which) {
  switch (which % 3) {
    case 0:
      return gfp::testing::H100Node();
    case 1:
      return gfp::testing::B200Node();
    default:
      return gfp::testing::A100Node();
  }
}

State Replay(const std::vector<events::Event>& journal, std::size_t from, State state) {
  for (std::size_t i = from; i < journal.size(); ++i) Apply(state, i + 1, journal[i]);
  return state;
}

RC_GTEST_PROP(StateMachineProperty, ReplayEqualsLiveStateAndInvariantsHold, ()) {
  const int which = *rc::gen::inRange(0, 3);
  const bool fm = *rc::gen::weightedElement<bool>({{4, true}, {1, false}});
  const NodeFixture node = AnyNode(which);
  const auto steps = *gfp::testing::GenScenario(node, fm);
  Driver live;
  gfp::testing::RunScenario(live, node, fm, steps);
  RC_ASSERT(!::testing::Test::HasFailure());
  const State replayed = Replay(live.journal, 0, State{});
  RC_ASSERT(replayed == live.state);
  RC_ASSERT(CheckInvariants(replayed).ok());
  // Nothing in a generated scenario is nonsense: no anomalies.
  RC_ASSERT(live.state.anomaly_count == 0u);
  // Shows in the output how much of the lifecycle the scenarios reached.
  std::size_t grants = 0, deactivations = 0, drifts = 0;
  for (const auto& e : live.journal) {
    grants += e.has_allocation_granted();
    deactivations += e.has_partition_deactivated();
    drifts += e.has_drift_detected();
  }
  RC_CLASSIFY(grants > 0, "granted");
  RC_CLASSIFY(deactivations > 0, "deactivated");
  RC_CLASSIFY(drifts > 0, "drift");
}

RC_GTEST_PROP(StateMachineProperty, EveryTransactionPrefixReplaysToTheLiveStateThere, ()) {
  const NodeFixture node = AnyNode(*rc::gen::inRange(0, 3));
  const auto steps = *gfp::testing::GenScenario(node, true);
  // Record the live state at every transaction boundary by re-running step by step.
  Driver live;
  const auto boundaries = gfp::testing::RunScenario(live, node, true, steps);
  RC_ASSERT(!::testing::Test::HasFailure());
  const std::size_t cut = *rc::gen::elementOf(boundaries);
  std::vector<events::Event> prefix(live.journal.begin(),
                                    live.journal.begin() + static_cast<long>(cut));
  const State recovered = Replay(prefix, 0, State{});
  RC_ASSERT(CheckInvariants(recovered).ok());
  // The live state at that boundary: replaying the same prefix incrementally.
  State at_cut;
  for (std::size_t i = 0; i < cut; ++i) Apply(at_cut, i + 1, live.journal[i]);
  RC_ASSERT(recovered == at_cut);
  RC_ASSERT(recovered.last_seq == cut);
}

// A crash after any transaction (also between an intent and its outcome), then start-up recovery
// against an FM that did or did not carry out each pending transition: the result is a clean
// state with nothing pending and nothing nonsensical journaled.
RC_GTEST_PROP(StateMachineProperty, RecoveryAfterAnyCrashPointLeavesNothingPending, ()) {
  const NodeFixture node = AnyNode(*rc::gen::inRange(0, 3));
  const auto steps = *gfp::testing::GenScenario(node, true);
  Driver live;
  gfp::testing::RunScenario(live, node, true, steps);
  RC_ASSERT(!::testing::Test::HasFailure());
  RC_PRE(!live.transactions.empty());
  const std::size_t cut = *rc::gen::elementOf(live.transactions);
  Driver restarted;
  restarted.now = live.now + 1'000'000;
  restarted.Commit(std::vector<events::Event>(live.journal.begin(),
                                              live.journal.begin() + static_cast<long>(cut)));
  std::set<PartitionId> fm_active;
  for (const auto& [pid, a] : restarted.state.active) fm_active.insert(pid);
  for (const auto& [pid, intent] : restarted.state.intents) {
    const bool applied = *rc::gen::arbitrary<bool>();
    const bool active_after = (intent.kind == IntentKind::kActivate) == applied;
    if (active_after) {
      fm_active.insert(pid);
    } else {
      fm_active.erase(pid);
    }
  }
  for (const auto& outcome : ResolvePendingIntents(restarted.state, fm_active, restarted.now)) {
    restarted.RunToCompletion(outcome);
  }
  restarted.Run(AbandonInterruptedRequests{restarted.now});
  RC_ASSERT(!::testing::Test::HasFailure());
  RC_ASSERT(restarted.state.intents.empty());
  for (const auto& [id, a] : restarted.state.allocations) {
    RC_ASSERT(a.status != AllocationStatus::kRequested);
  }
  RC_ASSERT(restarted.state.anomaly_count == 0u);
  // The journal's active set now equals what FM has.
  std::set<PartitionId> journal_active;
  for (const auto& [pid, a] : restarted.state.active) journal_active.insert(pid);
  RC_ASSERT(journal_active == fm_active);
}

RC_GTEST_PROP(StateMachineProperty, SnapshotPlusTailEqualsFullReplay, ()) {
  const NodeFixture node = AnyNode(*rc::gen::inRange(0, 3));
  const auto steps = *gfp::testing::GenScenario(node, true);
  Driver live;
  gfp::testing::RunScenario(live, node, true, steps);
  RC_ASSERT(!::testing::Test::HasFailure());
  const std::size_t at = *rc::gen::inRange<std::size_t>(0, live.journal.size() + 1);
  const State head = Replay(std::vector<events::Event>(
                                live.journal.begin(), live.journal.begin() + static_cast<long>(at)),
                            0, State{});
  auto restored = DecodeSnapshot(EncodeSnapshot(head));
  RC_ASSERT(restored.ok());
  RC_ASSERT(Replay(live.journal, at, *restored) == live.state);
}

RC_GTEST_PROP(StateMachineProperty, DecideIsDeterministic, ()) {
  const NodeFixture node = AnyNode(*rc::gen::inRange(0, 3));
  const auto steps = *gfp::testing::GenScenario(node, true);
  Driver a;
  Driver b;
  gfp::testing::RunScenario(a, node, true, steps);
  gfp::testing::RunScenario(b, node, true, steps);
  RC_ASSERT(a.journal.size() == b.journal.size());
  for (std::size_t i = 0; i < a.journal.size(); ++i) {
    RC_ASSERT(a.journal[i].SerializeAsString() == b.journal[i].SerializeAsString());
  }
  RC_ASSERT(a.state == b.state);
}

}  // namespace
}  // namespace gfp::sm
