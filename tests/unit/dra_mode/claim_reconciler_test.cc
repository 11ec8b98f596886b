// ClaimReconciler: a prepared claim that is gone, has another uid or no longer names its GPUs is
// unprepared after the release grace, with that reason journaled; an unreachable API server
// unprepares nothing, however long it lasts.
#include "plugin/dra_mode/claim_reconciler.h"

#include "statemachine/claims.h"
#include "statemachine/event_codec.h"
#include "tests/unit/dra_mode/dra_world.h"

namespace gfp::plugin::dra_mode {
namespace {

constexpr auto kGrace = std::chrono::seconds(30);
constexpr sm::Micros kSecond = 1'000'000;

class ClaimReconcilerTest : public DraWorldTest {
 protected:
  void SetUp() override {
    DraWorldTest::SetUp();
    reconciler_ = std::make_unique<ClaimReconciler>(world_->core(), api_, *preparer_, kGrace);
    api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(2)));
    ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  }

  sm::ClaimProgress Progress() {
    return world_->core().engine().Read(
        [](const sm::State& s) { return sm::ClaimProgressOf(s, "u-1"); });
  }

  // The reason of the last ClaimUnprepareRequested, from the state's unprepared record in the
  // journal's tail.
  std::string LastUnprepareReason() {
    std::string reason;
    auto& journal = world_->core().engine().journal();
    EXPECT_TRUE(journal
                    .ForEach(1, journal.LastSeq(),
                             [&](const store::StoredEvent& e) {
                               auto event = sm::DecodeEvent(e.type, e.time_unix_micros, e.payload);
                               if (event.ok() && event->has_claim_unprepare_requested()) {
                                 reason = events::ClaimUnprepareRequested::Reason_Name(
                                     event->claim_unprepare_requested().reason());
                               }
                               return Status::Ok();
                             })
                    .ok());
    return reason;
  }

  std::unique_ptr<ClaimReconciler> reconciler_;
};

TEST_F(ClaimReconcilerTest, AClaimThatStillStandsIsKept) {
  world_->Advance(100 * kSecond);
  const auto r = reconciler_->Reconcile();
  EXPECT_EQ(r.checked, 1);
  EXPECT_EQ(r.unprepared, 0);
  EXPECT_EQ(Progress(), sm::ClaimProgress::kPrepared);
}

TEST_F(ClaimReconcilerTest, ADeletedClaimIsUnpreparedOnlyAfterTheGrace) {
  api_.claims.clear();
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
  world_->Advance(29 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
  EXPECT_EQ(Progress(), sm::ClaimProgress::kPrepared);
  world_->Advance(1 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().unprepared, 1);
  EXPECT_EQ(Progress(), sm::ClaimProgress::kUnknown);
  EXPECT_EQ(LastUnprepareReason(), "REASON_CLAIM_GONE");
  EXPECT_TRUE(FmActive().empty());
}

TEST_F(ClaimReconcilerTest, AClaimCreatedAgainUnderItsNameIsAnotherClaim) {
  api_.claims["vms/vm-a-gpus"]["metadata"]["uid"] = "u-2";
  reconciler_->Reconcile();
  world_->Advance(30 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().unprepared, 1);
  EXPECT_EQ(LastUnprepareReason(), "REASON_UID_CHANGED");
}

TEST_F(ClaimReconcilerTest, AClaimAllocatedOtherGpusIsNotAllocatedHere) {
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(4)));
  reconciler_->Reconcile();
  world_->Advance(30 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().unprepared, 1);
  EXPECT_EQ(LastUnprepareReason(), "REASON_NOT_ALLOCATED_HERE");
}

TEST_F(ClaimReconcilerTest, AnUnreachableApiServerUnpreparesNothingHoweverLong) {
  api_.unreachable = true;
  for (int i = 0; i < 10; ++i) {
    world_->Advance(60 * kSecond);
    EXPECT_EQ(reconciler_->Reconcile().unreachable, 1);
  }
  EXPECT_EQ(Progress(), sm::ClaimProgress::kPrepared);
  // Gone once reachable again: the grace starts then, not at the first silent pass.
  api_.unreachable = false;
  api_.claims.clear();
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
}

TEST_F(ClaimReconcilerTest, AClaimBackWithinTheGraceRestartsItsClock) {
  const Json claim = api_.claims["vms/vm-a-gpus"];
  api_.claims.clear();
  reconciler_->Reconcile();
  world_->Advance(20 * kSecond);
  api_.claims["vms/vm-a-gpus"] = claim;
  reconciler_->Reconcile();
  api_.claims.clear();
  world_->Advance(20 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
  EXPECT_EQ(Progress(), sm::ClaimProgress::kPrepared);
}

}  // namespace
}  // namespace gfp::plugin::dra_mode
