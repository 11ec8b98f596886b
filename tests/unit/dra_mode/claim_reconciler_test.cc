// ClaimReconciler: a prepared claim (or one granted whose files are not written yet) that is gone,
// has another uid or no longer names its GPUs is unprepared after the release grace, with that
// reason journaled; an unreachable API server unprepares nothing, however long it lasts.
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

  sm::ClaimProgress Progress(const std::string& uid = "u-1") {
    return world_->core().engine().Read(
        [&](const sm::State& s) { return sm::ClaimProgressOf(s, uid); });
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

  // The GPUs of a 2-GPU partition that shares none with the one u-1 holds.
  std::vector<std::string> GpusOfADisjointPair() const {
    const auto first = GpusOf(PartitionOfSize(2));
    for (std::uint32_t id = 0; id < 64; ++id) {
      const auto gpus = GpusOf(id);
      if (gpus.size() == 2 && std::find(first.begin(), first.end(), gpus[0]) == first.end() &&
          std::find(first.begin(), first.end(), gpus[1]) == first.end()) {
        return gpus;
      }
    }
    ADD_FAILURE() << "no second 2-GPU partition";
    return {};
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

// Its GPUs are granted but its files were never written (the write failed, or a power cut lost
// ClaimPrepared with them, docs/recovery.md row 19): gone from the API server, it is unprepared
// all the same.
TEST_F(ClaimReconcilerTest, AClaimGrantedWithoutItsFilesIsReconciledToo) {
  ASSERT_EQ(preparer_->Unprepare("u-1", events::ClaimUnprepareRequested::REASON_KUBELET, ""), "");
  std::filesystem::create_directories(CdiSpec("u-2") / "in-the-way");
  api_.claims["vms/vm-a-gpus"] = Claim("u-2", GpusOf(PartitionOfSize(2)));
  EXPECT_NE(preparer_->Prepare({"u-2", "vms", "vm-a-gpus"}).error, "");
  ASSERT_EQ(Progress("u-2"), sm::ClaimProgress::kWriteFiles);
  api_.claims.clear();
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
  world_->Advance(30 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().unprepared, 1);
  EXPECT_EQ(Progress("u-2"), sm::ClaimProgress::kUnknown);
  EXPECT_FALSE(std::filesystem::exists(CdiSpec("u-2")));
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

// A kubeconfig that points at another cluster answers 404 for every claim: that is no definite
// answer for any of them, however long it lasts. One claim of one gone is still definite.
TEST_F(ClaimReconcilerTest, A404ForEveryOneOfSeveralClaimsUnpreparesNone) {
  api_.claims["vms/vm-b-gpus"] = Claim("u-2", GpusOfADisjointPair(), "vm-b-gpus");
  ASSERT_EQ(preparer_->Prepare({"u-2", "vms", "vm-b-gpus"}).error, "");
  const auto active = FmActive();
  ASSERT_EQ(active.size(), 2u);
  const Json b = api_.claims["vms/vm-b-gpus"];
  api_.claims.clear();
  for (int i = 0; i < 5; ++i) {
    world_->Advance(60 * kSecond);
    const auto r = reconciler_->Reconcile();
    EXPECT_EQ(r.unreachable, 2);
    EXPECT_EQ(r.unprepared, 0);
  }
  EXPECT_EQ(FmActive(), active);
  EXPECT_EQ(Progress("u-1"), sm::ClaimProgress::kPrepared);
  EXPECT_EQ(Progress("u-2"), sm::ClaimProgress::kPrepared);
  // Only one of them gone: that one is, after the grace.
  api_.claims["vms/vm-b-gpus"] = b;
  EXPECT_EQ(reconciler_->Reconcile().waiting, 1);
  world_->Advance(30 * kSecond);
  EXPECT_EQ(reconciler_->Reconcile().unprepared, 1);
  EXPECT_EQ(Progress("u-1"), sm::ClaimProgress::kUnknown);
  EXPECT_EQ(Progress("u-2"), sm::ClaimProgress::kPrepared);
}

// An answer about another object (a lying or broken server) says nothing about our claim.
TEST_F(ClaimReconcilerTest, AnAnswerNamingAnotherClaimIsNoAnswer) {
  api_.claims["vms/vm-a-gpus"]["metadata"]["name"] = "someone-else";
  api_.claims["vms/vm-a-gpus"]["metadata"]["uid"] = "u-9";
  for (int i = 0; i < 3; ++i) {
    world_->Advance(60 * kSecond);
    EXPECT_EQ(reconciler_->Reconcile().unreachable, 1);
  }
  EXPECT_EQ(Progress(), sm::ClaimProgress::kPrepared);
}

// FM refused kubelet's Unprepare once and kubelet never called again (its checkpoint lost, the
// pod force-deleted): the claim is not left "unpreparing" with its files for ever.
TEST_F(ClaimReconcilerTest, AnUnprepareThatFailedOnceAndWasNeverRetriedIsFinished) {
  ASSERT_TRUE(world_->fm()
                  .InjectFailure("fmDeactivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */, 1)
                  .ok());
  EXPECT_NE(preparer_->Unprepare("u-1"), "");
  ASSERT_EQ(Progress(), sm::ClaimProgress::kDeactivating);
  ASSERT_TRUE(std::filesystem::exists(CdiSpec("u-1")));
  const auto r = reconciler_->FinishUnprepares();
  EXPECT_EQ(r.unprepared, 1);
  EXPECT_EQ(Progress(), sm::ClaimProgress::kUnknown);
  EXPECT_FALSE(std::filesystem::exists(CdiSpec("u-1")));
  EXPECT_TRUE(FmActive().empty());
  EXPECT_EQ(reconciler_->FinishUnprepares().unprepared, 0);  // nothing left to finish
}

}  // namespace
}  // namespace gfp::plugin::dra_mode
