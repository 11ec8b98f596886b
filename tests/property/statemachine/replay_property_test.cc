// Properties of the pure core over random node lives (scenario.h: allocations, FM failures and
// changes behind the plugin's back, devices and mappings changing, plugin restarts and crashes in
// the middle of an allocation followed by start-up recovery):
//  - invariants hold and no anomaly is journaled after every decision, and Decide's scratch
//    state (what it reasoned with) equals the state after applying its events;
//  - the snapshot codec round-trips the state at every transaction boundary, and operator== and
//    the snapshot agree on it with any one field changed;
//  - start-up recovery after a crash at any transaction leaves nothing pending.
// Decide's determinism across processes and builds is decide_golden_test.cc's.
// A restart here rebuilds the state from the encoded events in memory; replay from a real SQLite
// journal against the engine's live state is in tests/property/engine.
//
// A failure prints the shrunk scenario and the seed; rerun it with
//   RC_PARAMS="seed=<n>" build/tests/property/statemachine/statemachine_property_tests
//     --gtest_filter=StateMachineProperty.<name>
// (or the RC_PARAMS="reproduce=..." line rapidcheck prints, which skips straight to the minimum).
// Properties use rapidcheck's assertions only: helpers return failures as values.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "common/state_fields.h"
#include "memory_executor.h"
#include "scenario.h"
#include "statemachine/recovery.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::sm {
namespace {

using gfp::testing::AnyNode;
using gfp::testing::Driver;
using gfp::testing::MemoryExecutor;
using gfp::testing::NodeFixture;
using gfp::testing::ScenarioRunner;
using gfp::testing::StateDiff;

// Runs a random life on an in-memory plugin; fails the property on the first broken check.
struct Life {
  NodeFixture node;
  bool fm = true;
  MemoryExecutor executor;
  gfp::testing::ScenarioStats stats;
  Micros now = 0;
};

void Live(Life& life, bool fm_sometimes_off) {
  life.node = AnyNode(*rc::gen::inRange(0, 3));
  life.fm = !fm_sometimes_off || *rc::gen::weightedElement<bool>({{4, true}, {1, false}});
  const auto steps = *gfp::testing::GenScenario(life.node, life.fm);
  ScenarioRunner runner(life.executor, life.node, life.fm);
  const Status status = runner.Run(steps);
  if (!status.ok()) RC_FAIL(status.message());
  life.stats = runner.stats();
  life.now = runner.now();
  // The boot alone journals: a life that compared no scratch state judged nothing.
  RC_ASSERT(life.stats.scratch_states_compared > 0);
}

RC_GTEST_PROP(StateMachineProperty, InvariantsAndDecideScratchHoldThroughAnyLife, ()) {
  Life life;
  Live(life, /*fm_sometimes_off=*/true);
  RC_TAG(gfp::testing::RestartKind(life.stats));
  RC_CLASSIFY(life.stats.grants > 0, "granted");
  RC_CLASSIFY(life.stats.claims_prepared > 0, "claim prepared");
  RC_CLASSIFY(life.stats.claims_unprepared > 0, "claim unprepared");
}

RC_GTEST_PROP(StateMachineProperty, SnapshotCodecRoundTripsEveryBoundaryState, ()) {
  Life life;
  Live(life, true);
  RC_TAG(gfp::testing::NodeChangeKind(life.stats));
  const auto& journal = life.executor.driver.journal;
  State state;
  std::size_t applied = 0;
  for (std::size_t boundary : life.executor.driver.transactions) {
    for (; applied < boundary; ++applied) Apply(state, applied + 1, journal[applied]);
    auto restored = DecodeSnapshot(EncodeSnapshot(state));
    RC_ASSERT(restored.ok());
    if (!(*restored == state))
      RC_FAIL("snapshot at seq " + std::to_string(boundary) + " " + StateDiff(state, *restored));
  }
}

// operator== and the snapshot message agree on random states: one field changed anywhere in a
// state of a random life (tests/common/state_fields.h) is seen by ==, held by the snapshot and
// survives the codec, so a State field the snapshot lacks cannot hide behind a default value.
RC_GTEST_PROP(StateMachineProperty, OperatorEqualsAndTheSnapshotAgreeOnAnyChangedField, ()) {
  Life life;
  Live(life, true);
  const auto& journal = life.executor.driver.journal;
  const auto changes = gfp::testing::FieldChanges();
  State state;
  std::size_t applied = 0;
  for (std::size_t boundary : life.executor.driver.transactions) {
    for (; applied < boundary; ++applied) Apply(state, applied + 1, journal[applied]);
    const auto& c = changes[*rc::gen::inRange<std::size_t>(0, changes.size())];
    State changed = state;
    c.change(changed);
    if (changed == state) RC_FAIL("operator== does not see " + c.field);
    if (!c.in_snapshot) continue;
    if (EncodeSnapshot(changed) == EncodeSnapshot(state)) RC_FAIL("no snapshot field: " + c.field);
    auto restored = DecodeSnapshot(EncodeSnapshot(changed));
    RC_ASSERT(restored.ok());
    if (!(*restored == changed))
      RC_FAIL("changed " + c.field + ", the snapshot lost: " + StateDiff(changed, *restored));
  }
}

// A crash after any transaction (also between an intent and its outcome), then start-up recovery
// against an FM that did or did not carry out each pending transition: the result is a clean
// state with nothing pending and nothing nonsensical journaled.
RC_GTEST_PROP(StateMachineProperty, RecoveryAfterAnyCrashPointLeavesNothingPending, ()) {
  Life life;
  Live(life, false);
  RC_TAG(gfp::testing::FabricChangeKind(life.stats));
  const Driver& live = life.executor.driver;
  RC_PRE(!live.transactions.empty());
  const std::size_t cut = *rc::gen::elementOf(live.transactions);
  Driver restarted;
  restarted.report_to_gtest = false;
  restarted.now = life.now + 1'000'000;
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
  if (!restarted.broken.empty()) RC_FAIL(restarted.broken);
  for (const auto& [pid, intent] : restarted.state.intents) {
    RC_FAIL("partition " + std::to_string(pid) + " still has a pending " +
            IntentKindName(intent.kind));
  }
  for (const auto& [id, a] : restarted.state.allocations) {
    if (a.status == AllocationStatus::kRequested) RC_FAIL(id + " is still requested");
  }
  RC_ASSERT(restarted.state.anomaly_count == 0u);
  // The journal's active set now equals what FM has.
  std::set<PartitionId> journal_active;
  for (const auto& [pid, a] : restarted.state.active) journal_active.insert(pid);
  RC_ASSERT(journal_active == fm_active);
}

}  // namespace
}  // namespace gfp::sm
