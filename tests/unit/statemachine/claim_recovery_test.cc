// docs/recovery.md rows 17-22, one test per row: a DRA claim's prepare or unprepare interrupted
// between its intent and its outcome, Fabric Manager's answer at start-up, what recovery
// records, and how the claim is finished afterwards.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/claims.h"
#include "statemachine/recovery.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class ClaimRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override { d.Boot(node); }

  PrepareClaim Claim(const std::string& uid, std::vector<int> modules) {
    PrepareClaim c;
    c.now = ++d.now;
    c.claim.set_uid(uid);
    c.claim.set_namespace_("vms");
    c.claim.set_name("claim-" + uid);
    const auto gpus = Modules(node, std::move(modules));
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto& device = c.devices.emplace_back();
      device.set_request("gpu" + std::to_string(i));
      device.set_bdf(gpus[i]);
    }
    return c;
  }
  void Prepared(const PrepareClaim& c) {
    ASSERT_EQ(d.RunToCompletion(c), "");
    ASSERT_EQ(d.Run(RecordClaimFiles{++d.now, c.claim.uid()}).refusal, "");
  }
  UnprepareClaim Unprepare(const std::string& uid) {
    return UnprepareClaim{++d.now, uid, events::ClaimUnprepareRequested::REASON_KUBELET, ""};
  }
  std::vector<std::string> Recover(const std::set<PartitionId>& fm_active) {
    return d.Recover(fm_active);
  }
  ClaimProgress Progress(const std::string& uid) const { return ClaimProgressOf(d.state, uid); }

  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

// Row 17: the claim's activation took effect, its answer never reached kubelet.
TEST_F(ClaimRecoveryTest, ClaimActivationThatTookEffectFailsThePrepareAndTheRetryTakesIt) {
  const PrepareClaim c = Claim("u1", {1, 2, 3, 4});
  ASSERT_EQ(d.Run(c).effects.size(), 1u);  // crash before the FM call's outcome
  EXPECT_THAT(Recover({1}), ElementsAre("PartitionActivated", "ClaimPrepareFailed"));
  EXPECT_EQ(Progress("u1"), ClaimProgress::kUnknown);
  ASSERT_TRUE(d.state.active.count(1));
  const Decision retry = d.Run(c);
  EXPECT_THAT(retry.effects, IsEmpty());
  EXPECT_EQ(Progress("u1"), ClaimProgress::kWriteFiles);
  EXPECT_EQ(d.state.active.at(1).owner, retry.allocation_id);
}

// Row 18: the claim's activation did not happen.
TEST_F(ClaimRecoveryTest, ClaimActivationThatDidNotHappenFailsThePrepare) {
  const PrepareClaim c = Claim("u1", {1, 2, 3, 4});
  ASSERT_EQ(d.Run(c).effects.size(), 1u);
  EXPECT_THAT(Recover({}), ElementsAre("PartitionActivationFailed", "ClaimPrepareFailed"));
  EXPECT_TRUE(d.state.active.empty());
  EXPECT_EQ(d.RunToCompletion(c), "");
  EXPECT_EQ(Progress("u1"), ClaimProgress::kWriteFiles);
}

// Row 19: granted, the process died while writing the claim's files.
TEST_F(ClaimRecoveryTest, GrantedClaimWithoutFilesWaitsForItsFiles) {
  const PrepareClaim c = Claim("u1", {1, 2, 3, 4});
  ASSERT_EQ(d.RunToCompletion(c), "");
  EXPECT_THAT(Recover({1}), IsEmpty());
  EXPECT_EQ(Progress("u1"), ClaimProgress::kWriteFiles);
  const std::size_t mark = d.journal.size();
  const Decision retry = d.Run(c);  // kubelet's retry: nothing to journal, the files are next
  EXPECT_THAT(retry.effects, IsEmpty());
  EXPECT_EQ(d.journal.size(), mark);
  EXPECT_EQ(d.Run(RecordClaimFiles{++d.now, "u1"}).refusal, "");
  EXPECT_EQ(Progress("u1"), ClaimProgress::kPrepared);
}

// Row 20: a prepared claim's re-activation (repeated Prepare), interrupted.
TEST_F(ClaimRecoveryTest, ClaimReactivationIsResolvedForItsClaim) {
  for (const bool took_effect : {true, false}) {
    SCOPED_TRACE(took_effect ? "took effect" : "did not happen");
    d = Driver();
    d.Boot(node);
    const PrepareClaim c = Claim("u1", {1, 2, 3, 4});
    Prepared(c);
    events::Event lost;
    lost.set_time_unix_micros(++d.now);
    lost.mutable_drift_detected()->set_partition_id(1);
    lost.mutable_drift_detected()->set_kind(events::DriftDetected::KIND_ACTIVE_IN_JOURNAL_ONLY);
    d.Commit({lost});
    ASSERT_EQ(d.Run(c).effects.size(), 1u);  // repair journaled, the FM call's outcome lost
    if (took_effect) {
      EXPECT_THAT(Recover({1}), ElementsAre("PartitionActivated"));
      EXPECT_EQ(d.state.active.at(1).owner, ClaimAllocation(d.state, "u1")->id);
      EXPECT_EQ(Progress("u1"), ClaimProgress::kWriteFiles);
    } else {
      EXPECT_THAT(Recover({}), ElementsAre("PartitionActivationFailed"));
      EXPECT_EQ(Progress("u1"), ClaimProgress::kPreparing);
      EXPECT_EQ(d.RunToCompletion(c), "");  // the next Prepare activates it
      EXPECT_EQ(Progress("u1"), ClaimProgress::kWriteFiles);
    }
    EXPECT_NE(ClaimAllocation(d.state, "u1"), nullptr) << "a running VM's claim is never failed";
  }
}

// Row 21: the unprepare's deactivation, interrupted; kubelet's retried Unprepare finishes it.
TEST_F(ClaimRecoveryTest, ClaimUnprepareIsResumedByTheNextUnprepare) {
  for (const bool took_effect : {true, false}) {
    SCOPED_TRACE(took_effect ? "took effect" : "did not happen");
    d = Driver();
    d.Boot(node);
    Prepared(Claim("u1", {1, 2, 3, 4}));
    ASSERT_EQ(d.Run(Unprepare("u1")).effects.size(), 1u);
    EXPECT_THAT(Recover(took_effect ? std::set<PartitionId>{} : std::set<PartitionId>{1}),
                ElementsAre(took_effect ? "PartitionDeactivated" : "PartitionDeactivationFailed"));
    EXPECT_EQ(Progress("u1"),
              took_effect ? ClaimProgress::kRemoveFiles : ClaimProgress::kDeactivating);
    EXPECT_EQ(d.RunToCompletion(Unprepare("u1")), "");
    EXPECT_EQ(Progress("u1"), ClaimProgress::kRemoveFiles);
    EXPECT_TRUE(d.state.active.empty());
    EXPECT_EQ(d.Run(RecordClaimFilesRemoved{++d.now, "u1"}).refusal, "");
    EXPECT_EQ(Progress("u1"), ClaimProgress::kUnknown);
  }
}

// Row 22: the partition is gone, the process died while removing the claim's files.
TEST_F(ClaimRecoveryTest, ClaimUnprepareWithoutItsFilesRemovalIsFinishedByTheRetry) {
  Prepared(Claim("u1", {1, 2, 3, 4}));
  ASSERT_EQ(d.RunToCompletion(Unprepare("u1")), "");
  EXPECT_THAT(Recover({}), IsEmpty());
  EXPECT_EQ(Progress("u1"), ClaimProgress::kRemoveFiles);
  const std::size_t mark = d.journal.size();
  EXPECT_EQ(d.RunToCompletion(Unprepare("u1")), "");
  EXPECT_EQ(d.journal.size(), mark) << "no second deactivation";
  EXPECT_EQ(d.Run(RecordClaimFilesRemoved{++d.now, "u1"}).refusal, "");
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("ClaimUnprepared"));
}

}  // namespace
}  // namespace gfp::sm
