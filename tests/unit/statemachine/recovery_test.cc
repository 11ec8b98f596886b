// docs/recovery.md, one test per row: a journal whose tail has a transition without an outcome,
// Fabric Manager's answer at start-up, and what recovery records.
#include "statemachine/recovery.h"

#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/apply.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override { d.Boot(node); }

  std::vector<std::string> Recover(const std::set<PartitionId>& fm_active) {
    return d.Recover(fm_active);
  }

  // Journals a request's first step and "crashes" before carrying out its effect.
  Decision CrashAfterIntent(std::vector<int> modules) {
    Decision first = d.Run(d.Request(node.resource, Modules(node, std::move(modules))));
    EXPECT_EQ(first.effects.size(), 1u);
    return first;
  }

  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

// Row 1: activation requested, FM reports the partition active.
TEST_F(RecoveryTest, ActivationThatTookEffectIsRecordedAndItsRequestRejected) {
  Decision crashed = CrashAfterIntent({1, 3});
  EXPECT_THAT(Recover({3}), ElementsAre("PartitionActivated", "AllocationRejected"));
  ASSERT_TRUE(d.state.active.count(3));
  EXPECT_TRUE(d.state.active.at(3).owner.empty());  // ownerless until kubelet retries
  EXPECT_FALSE(d.state.allocations.count(crashed.allocation_id));
  // kubelet's retry of the same devices claims the partition without an FM call.
  Decision retry = d.Run(d.Request(node.resource, Modules(node, {1, 3})));
  EXPECT_TRUE(retry.effects.empty());
  EXPECT_EQ(d.state.active.at(3).owner, retry.allocation_id);
}

// Row 2: activation requested, FM reports the partition inactive.
TEST_F(RecoveryTest, ActivationThatDidNotHappenFailsItsRequest) {
  CrashAfterIntent({1, 3});
  EXPECT_THAT(Recover({}), ElementsAre("PartitionActivationFailed", "AllocationRejected"));
  EXPECT_TRUE(d.state.active.empty());
  const events::FmResult& fm = d.journal[d.journal.size() - 2].partition_activation_failed().fm();
  EXPECT_EQ(fm.name(), "RECOVERED_NOT_APPLIED");  // journaled: the literal, not the constant
  // Its own representation, not FM's FM_ST_GENERIC_ERROR number.
  EXPECT_EQ(fm.origin(), events::FmResult::ORIGIN_RECOVERED_NOT_APPLIED);
  EXPECT_EQ(fm.code(), 0);
  EXPECT_TRUE(RecoveredNotApplied(fm));
  EXPECT_FALSE(FmCallSucceeded(fm));
}

// Journals written before FmResult.origin marked "recovered as not applied" with code -2 (FM's
// GENERIC_ERROR) and the name RECOVERED_NOT_APPLIED: still read as the recovery outcome, while
// FM's own GENERIC_ERROR is not.
TEST(RecoveredNotAppliedTest, OlderFormIsReadAsTheRecoveryOutcome) {
  events::FmResult legacy;
  legacy.set_code(-2);  // FM_ST_GENERIC_ERROR's number, as older journals hold it
  legacy.set_name("RECOVERED_NOT_APPLIED");  // what older journals hold
  legacy.set_message("recovered after restart: Fabric Manager reports partition 3 inactive");
  events::FmResult decoded;  // as an old journal's bytes decode in this version
  ASSERT_TRUE(decoded.ParseFromString(legacy.SerializeAsString()));
  EXPECT_EQ(decoded.origin(), events::FmResult::ORIGIN_FABRIC_MANAGER);
  EXPECT_TRUE(RecoveredNotApplied(decoded));
  EXPECT_FALSE(FmCallSucceeded(decoded));

  events::FmResult generic;
  generic.set_code(-2);
  generic.set_name("FM_ST_GENERIC_ERROR");
  EXPECT_FALSE(RecoveredNotApplied(generic));
  EXPECT_FALSE(FmCallSucceeded(generic));
  EXPECT_TRUE(FmCallSucceeded(events::FmResult{}));
}

// The older and the newer form of the same recovery replay to the same state.
TEST(RecoveredNotAppliedTest, BothFormsReplayToTheSameState) {
  const auto node = H100Node();
  std::vector<events::Event> journal;
  {
    Driver d;
    d.Boot(node);
    d.Run(d.Request(node.resource, Modules(node, {1, 3})));
    for (const auto& outcome : ResolvePendingIntents(d.state, {}, ++d.now)) d.Run(outcome);
    journal = d.journal;
  }
  std::vector<events::Event> legacy = journal;
  bool rewritten = false;
  for (auto& e : legacy) {
    if (!e.has_partition_activation_failed()) continue;
    events::FmResult* fm = e.mutable_partition_activation_failed()->mutable_fm();
    ASSERT_EQ(fm->origin(), events::FmResult::ORIGIN_RECOVERED_NOT_APPLIED);
    fm->clear_origin();
    fm->set_code(-2);  // as older journals hold it
    rewritten = true;
  }
  ASSERT_TRUE(rewritten);
  State now_form, old_form;
  for (std::size_t i = 0; i < journal.size(); ++i) Apply(now_form, i + 1, journal[i]);
  for (std::size_t i = 0; i < legacy.size(); ++i) Apply(old_form, i + 1, legacy[i]);
  EXPECT_EQ(now_form, old_form);
  EXPECT_TRUE(now_form.active.empty());
  EXPECT_TRUE(now_form.intents.empty());
}

// Row 3: release deactivation requested, FM reports the partition inactive.
TEST_F(RecoveryTest, ReleaseThatTookEffectIsRecorded) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {2, 4}))), "");
  ReleaseAllocation release;
  release.now = ++d.now;
  release.allocation_id = d.state.active.at(4).owner;
  ASSERT_EQ(d.Run(release).effects.size(), 1u);
  EXPECT_THAT(Recover({}), ElementsAre("PartitionDeactivated"));
  EXPECT_TRUE(d.state.active.empty());
}

// Row 4: release deactivation requested, FM reports the partition still active.
TEST_F(RecoveryTest, ReleaseThatDidNotHappenLeavesAnOwnerlessPartitionToRelease) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {2, 4}))), "");
  ReleaseAllocation release;
  release.now = ++d.now;
  release.allocation_id = d.state.active.at(4).owner;
  d.Run(release);
  EXPECT_THAT(Recover({4}), ElementsAre("PartitionDeactivationFailed"));
  ASSERT_TRUE(d.state.active.count(4));
  EXPECT_TRUE(d.state.active.at(4).owner.empty());
  EXPECT_EQ(d.RunToCompletion(ReleaseOrphanPartition{++d.now, 4, "no pod holds it"}), "");
  EXPECT_TRUE(d.state.active.empty());
}

// Row 5: a stale partition's deactivation requested for a new allocation, FM reports it done.
TEST_F(RecoveryTest, StaleDeactivationThatTookEffectRejectsTheInterruptedRequest) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  Decision crashed = CrashAfterIntent({1});  // deactivate 3 first
  ASSERT_EQ(crashed.effects[0].kind, Effect::Kind::kDeactivatePartition);
  EXPECT_THAT(Recover({}), ElementsAre("PartitionDeactivated", "AllocationRejected"));
  EXPECT_TRUE(d.state.active.empty());  // nothing activated for a caller that is gone
}

// Row 6: a stale partition's deactivation requested, FM reports it still active.
TEST_F(RecoveryTest, StaleDeactivationThatDidNotHappenRejectsTheRequest) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1, 3}))), "");
  CrashAfterIntent({1});
  EXPECT_THAT(Recover({3}), ElementsAre("PartitionDeactivationFailed", "AllocationRejected"));
  ASSERT_TRUE(d.state.active.count(3));
  EXPECT_TRUE(d.state.active.at(3).owner.empty());
}

// Row 7: a re-activation (drift repair, PreStart) requested for a granted allocation.
TEST_F(RecoveryTest, ReactivationIsResolvedForItsGrantedOwner) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {5, 6, 7, 8}))), "");
  const AllocationId owner = d.state.active.at(2).owner;
  ObserveFabricState lost;
  lost.now = ++d.now;
  lost.partitions = gfp::testing::PartitionsOf(node, {});
  ASSERT_EQ(d.Run(lost).effects.size(), 1u);  // re-activation intent, then crash
  EXPECT_THAT(Recover({2}), ElementsAre("PartitionActivated"));
  EXPECT_EQ(d.state.active.at(2).owner, owner);
  EXPECT_EQ(d.state.allocations.at(owner).status, AllocationStatus::kGranted);
}

// Row 8: a request journaled without a pending transition (not produced by this version, but
// a journal may hold one): rejected.
TEST_F(RecoveryTest, RequestWithoutTransitionIsRejected) {
  events::Event e;
  e.set_time_unix_micros(++d.now);
  e.mutable_allocation_requested()->set_allocation_id("alloc-77");
  e.mutable_allocation_requested()->set_resource(node.resource);
  d.Commit({e});
  EXPECT_THAT(Recover({}), ElementsAre("AllocationRejected"));
  EXPECT_THAT(d.journal.back().allocation_rejected().reason(), HasSubstr("interrupted"));
}

// Row 9: nothing pending: recovery records nothing.
TEST_F(RecoveryTest, CleanJournalNeedsNothing) {
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, Modules(node, {1}))), "");
  EXPECT_TRUE(Recover({7}).empty());
}

// Issue 8: when the outcome could not be journaled (a full disk) the plugin did not stop; the
// rejection says what happened.
TEST_F(RecoveryTest, RuntimeResolutionNamesTheCauseNotAStop) {
  CrashAfterIntent({1, 3});
  const std::string cause = "the journal append failed (database or disk is full)";
  const std::size_t mark = d.journal.size();
  for (const auto& outcome : ResolvePendingIntents(d.state, {3}, ++d.now, cause)) {
    EXPECT_THAT(outcome.fm.message(), HasSubstr("recovered after " + cause));
    d.RunToCompletion(outcome);
  }
  ASSERT_EQ(d.journal.size(), mark + 2);
  const std::string reason = d.journal.back().allocation_rejected().reason();
  EXPECT_THAT(reason, HasSubstr(cause));
  EXPECT_EQ(reason.find("the plugin stopped"), std::string::npos) << reason;
}

TEST_F(RecoveryTest, AbandonedRequestNamesTheCause) {
  // A request whose first step was journaled without its transition (row 8).
  d.Run(d.Request(node.resource, Modules(node, {1, 3})));
  d.state.intents.clear();  // as if its transition had never been journaled
  Decision abandoned = d.Run(AbandonInterruptedRequests{++d.now, "the journal append failed (x)"});
  EXPECT_THAT(abandoned.refusal, HasSubstr("interrupted: the journal append failed (x)"));
}

}  // namespace
}  // namespace gfp::sm
