// A journal written by schema version 1 (the demo's day, tests/fixtures/journal-v1-demo-day.db)
// must keep opening, migrating, verifying and replaying to the same state in every later
// version. Never regenerate a released fixture: add a new one for a new schema version.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/temp_dir.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "statemachine/invariants.h"

namespace gfp::engine {
namespace {

const std::filesystem::path kFixture =
    std::filesystem::path(GFP_SOURCE_DIR) / "tests/fixtures/journal-v1-demo-day.db";

class GoldenJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    copy = dir.path() / "journal.db";
    std::filesystem::copy_file(kFixture, copy);
  }
  gfp::testing::TempDir dir;
  std::filesystem::path copy;
};

TEST_F(GoldenJournalTest, VerifiesDecodesAndReplaysWithInvariants) {
  auto journal = store::Journal::Open(copy, store::OpenMode::kReadOnly);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  sm::State state;
  const store::VerifyReport report = (*journal)->Verify([&](const store::StoredEvent& e) -> Status {
    GFP_ASSIGN_OR_RETURN(events::Event event,
                         sm::DecodeEvent(e.type, e.time_unix_micros, e.payload));
    sm::Apply(state, e.seq, event);
    return sm::CheckInvariants(state);
  });
  EXPECT_TRUE(report.ok) << "seq " << report.first_bad_seq << ": " << report.reason;
  EXPECT_EQ(report.events_checked, 43u);
  EXPECT_EQ(state.anomaly_count, 0u);
}

TEST_F(GoldenJournalTest, ReplaysToTheKnownMiddleOfTheDay) {
  auto journal = store::Journal::Open(copy, store::OpenMode::kReadOnly);
  ASSERT_TRUE(journal.ok());
  // Seq 20: vm-a, vm-b and vm-c run on partitions 5, 1 and 12 of the HGX H100 table.
  auto state = Replay(**journal, 20, /*use_snapshots=*/false, /*check_invariants=*/true);
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_EQ(state->active.size(), 3u);
  const std::map<sm::PartitionId, std::pair<std::string, std::string>> expected = {
      {1, {"alloc-2", "virt-launcher-vm-b"}},
      {5, {"alloc-1", "virt-launcher-vm-a"}},
      {12, {"alloc-3", "virt-launcher-vm-c"}}};
  for (const auto& [pid, who] : expected) {
    ASSERT_TRUE(state->active.count(pid)) << "partition " << pid;
    const auto& owner = state->active.at(pid).owner;
    EXPECT_EQ(owner, who.first);
    EXPECT_EQ(state->allocations.at(owner).pod_name, who.second);
    EXPECT_EQ(state->allocations.at(owner).status, sm::AllocationStatus::kBound);
  }
  EXPECT_EQ(state->allocations.at("alloc-1").devices,
            (std::vector<std::string>{"0000:43:00.0", "0000:52:00.0"}));
  EXPECT_EQ(state->devices.size(), 8u);
  EXPECT_EQ(state->partitions.size(), 15u);
  EXPECT_TRUE(state->fm_enabled);
}

TEST_F(GoldenJournalTest, OpensForWritingMigratesAndRecoversTheEndOfTheDay) {
  auto engine = Engine::Open(copy);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  const sm::State end = (*engine)->CopyState();
  EXPECT_EQ(end.last_seq, 43u);
  EXPECT_TRUE(end.active.empty());
  EXPECT_TRUE(end.allocations.empty());
  EXPECT_EQ(end.next_allocation_number, 6u);
  EXPECT_EQ(end.kubelet_restarts, 1u);
  // The fixture's snapshot has format 1, older than this binary's: ignored, not trusted.
  EXPECT_EQ((*engine)->recovery().snapshot_seq, 0u);
  // The same state with and without snapshots.
  auto replayed = Replay((*engine)->journal(), 0, /*use_snapshots=*/false, true);
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(*replayed, end);
  // And the journal keeps growing on the same chain.
  auto d = (*engine)->Execute(sm::ObserveKubeletRestart{end.last_time + 1, "golden test"});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*engine)->journal().LastSeq(), 44u);
  EXPECT_TRUE((*engine)->journal().Verify({}).ok);
}

// Opening for writing gives the 43 schema-1 events their index rows: each row is a tag the
// event names (sm::EventSubjects of the decoded event, read here with a plain scan), and each
// such tag has its row.
TEST_F(GoldenJournalTest, OpeningForWritingIndexesTheSchema1Events) {
  std::set<std::pair<std::string, std::uint64_t>> named;
  {
    auto reader = store::Journal::Open(copy, store::OpenMode::kReadOnly);
    ASSERT_TRUE(reader.ok());
    ASSERT_TRUE((*reader)
                    ->ForEach(1, 0,
                              [&](const store::StoredEvent& e) -> Status {
                                GFP_ASSIGN_OR_RETURN(
                                    events::Event event,
                                    sm::DecodeEvent(e.type, e.time_unix_micros, e.payload));
                                for (const auto& tag : sm::EventSubjects(event)) {
                                  named.emplace(tag, e.seq);
                                }
                                return Status::Ok();
                              })
                    .ok());
  }
  ASSERT_GT(named.size(), 43u);  // most events name a partition or a device, some several
  auto engine = Engine::Open(copy);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  EXPECT_EQ((*engine)->recovery().events_indexed, 43u);
  EXPECT_EQ((*engine)->recovery().index_error, "");
  EXPECT_EQ(*(*engine)->journal().SubjectsFrom(), 1u);
  std::set<std::pair<std::string, std::uint64_t>> rows;
  ASSERT_TRUE((*engine)
                  ->journal()
                  .ForEachSubjectRow(1, 43,
                                     [&](std::string_view tag, std::uint64_t seq, std::int64_t) {
                                       rows.emplace(std::string(tag), seq);
                                       return Status::Ok();
                                     })
                  .ok());
  EXPECT_EQ(rows, named);
}

}  // namespace
}  // namespace gfp::engine
