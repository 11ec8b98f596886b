// Journal::Append's Durability, on the fault VFS (durable = synced to the real file): an append
// with kSurvivesProcessCrash writes the -wal without syncing it, so a power cut right after it
// loses it (and only it); the next kSurvivesPowerLoss append syncs again and makes both durable,
// also after the relaxed append itself failed.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "common/fault_vfs.h"
#include "fault/powercut/sweep_options.h"
#include "store/journal.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;
using store::Durability;

class AppendDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(fault::InstallFaultVfs(), "");
    ASSERT_EQ(fault::ResetFaultVfs(), 0);
    Reopen();
  }
  void TearDown() override {
    journal_.reset();
    fault::ResetFaultVfs();
  }

  void Reopen() {
    journal_.reset();
    auto opened = store::Journal::Open(dir_.path() / "journal.db", store::OpenMode::kReadWrite);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    journal_ = std::move(opened).value();
  }

  Status Append(Durability durability) {
    const store::NewEvent event{++time_, "Test", "payload " + std::to_string(time_), {"gpu:1"}};
    return journal_->Append(std::span(&event, 1), durability).status();
  }

  // The power goes off at the next write or sync (un-synced changes lost), and comes back.
  void CutThePowerAndReboot() {
    fault::ArmPowerCut(1, fault::CutMode::kDiscardUnsynced, 1);
    EXPECT_FALSE(Append(Durability::kSurvivesPowerLoss).ok());  // the cut lands in it
    ASSERT_TRUE(fault::PoweredOff());
    journal_.reset();
    ASSERT_EQ(fault::ResetFaultVfs(), 0);
    Reopen();
  }

  RunDir dir_;
  std::unique_ptr<store::Journal> journal_;
  std::int64_t time_ = 1'000;
};

TEST_F(AppendDurabilityTest, ARelaxedAppendIsNotSyncedAndAPowerCutLosesItAlone) {
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  const std::uint64_t syncs = fault::Counters().syncs;
  ASSERT_TRUE(Append(Durability::kSurvivesProcessCrash).ok());
  EXPECT_EQ(fault::Counters().syncs, syncs) << "a relaxed append synced";
  EXPECT_EQ(journal_->LastSeq(), 2u);
  CutThePowerAndReboot();
  EXPECT_EQ(journal_->LastSeq(), 1u);
  EXPECT_TRUE(journal_->Verify(nullptr).ok);
}

TEST_F(AppendDurabilityTest, TheNextDurableAppendMakesTheRelaxedOneDurable) {
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  ASSERT_TRUE(Append(Durability::kSurvivesProcessCrash).ok());
  const std::uint64_t syncs = fault::Counters().syncs;
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  EXPECT_GT(fault::Counters().syncs, syncs) << "synchronous=FULL was not put back";
  CutThePowerAndReboot();
  EXPECT_EQ(journal_->LastSeq(), 3u);
  EXPECT_TRUE(journal_->Verify(nullptr).ok);
}

// Writes other than appends (a snapshot here) commit with synchronous=FULL again.
TEST_F(AppendDurabilityTest, ASnapshotAfterARelaxedAppendIsDurable) {
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  ASSERT_TRUE(Append(Durability::kSurvivesProcessCrash).ok());
  ASSERT_TRUE(journal_->SaveSnapshot(2, "state at seq 2").ok());
  CutThePowerAndReboot();
  EXPECT_EQ(journal_->LastSeq(), 2u);
  auto snapshot = journal_->LatestValidSnapshot(0, nullptr);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().message();
  ASSERT_TRUE(snapshot->has_value());
  EXPECT_EQ((*snapshot)->seq, 2u);
}

TEST_F(AppendDurabilityTest, ARelaxedAppendThatFailedLeavesTheNextOneDurable) {
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  fault::ArmFault(fault::IoOp::kWrite, fault::Counters().writes + 1, SQLITE_FULL, false);
  const Status full = Append(Durability::kSurvivesProcessCrash);
  EXPECT_EQ(full.code(), ErrorCode::kResourceExhausted) << full.message();
  fault::ClearFaults();
  ASSERT_TRUE(Append(Durability::kSurvivesPowerLoss).ok());
  CutThePowerAndReboot();
  EXPECT_EQ(journal_->LastSeq(), 2u);
}

}  // namespace
}  // namespace gfp::faulttest
