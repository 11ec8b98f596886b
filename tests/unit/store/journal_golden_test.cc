// Golden fixtures: a journal written by each released schema version must still open, migrate
// and read back to the same events, with the same hashes. fixtures/journal-v1.db was written by
// the generator below (run: GFP_WRITE_GOLDEN_JOURNAL=<path> journal_unit_tests
// --gtest_filter=JournalGoldenTest.WriteV1Fixture). Never regenerate a released fixture.
#include <gtest/gtest.h>

#include <cstdlib>

#include "journal_test_util.h"
#include "store/hash_chain.h"

namespace gfp::store {
namespace {

using testing::Describe;
using testing::MakeEvent;
using testing::MakeEvents;
using testing::OpenOrDie;
using testing::ReadAll;
using testing::TempDir;

constexpr std::uint64_t kV1Events = 20;
// hash(20) of the fixture: pins the hash formula across releases.
constexpr const char* kV1LastHash =
    "a99f81479da544f0b0dd96e8921decbfa0fa0695a7b447331810df9c3bbdb8db";

std::filesystem::path FixturePath(const char* name) {
  return std::filesystem::path(GFP_STORE_FIXTURE_DIR) / name;
}

TEST(JournalGoldenTest, WriteV1Fixture) {
  const char* out = std::getenv("GFP_WRITE_GOLDEN_JOURNAL");
  if (out == nullptr) GTEST_SKIP() << "generator; set GFP_WRITE_GOLDEN_JOURNAL=<path> to run";
  auto journal = OpenOrDie(out, OpenMode::kReadWrite);
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Append(MakeEvents(1, 10)).ok());
  ASSERT_TRUE(journal->SaveSnapshot(10, "state after 10").ok());
  ASSERT_TRUE(journal->Append(MakeEvents(11, kV1Events - 10)).ok());
  std::printf("hash(%llu) = %s\n", static_cast<unsigned long long>(kV1Events),
              HashToHex(ReadAll(*journal).back().hash).c_str());
}

TEST(JournalGoldenTest, V1FixtureOpensMigratesAndReadsBackUnchanged) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::filesystem::copy_file(FixturePath("journal-v1.db"), path);  // a writer would modify it
  for (OpenMode mode : {OpenMode::kReadOnly, OpenMode::kReadWrite}) {
    SCOPED_TRACE(mode == OpenMode::kReadOnly ? "read-only" : "read-write");
    auto journal = OpenOrDie(path, mode);
    ASSERT_NE(journal, nullptr);
    // A reader reads schema 1 as it is; the writer migrates it.
    EXPECT_EQ(journal->SchemaVersion(), mode == OpenMode::kReadOnly ? 1 : 2);
    EXPECT_EQ(journal->LastSeq(), kV1Events);
    const auto events = ReadAll(*journal);
    ASSERT_EQ(events.size(), kV1Events);
    for (std::uint64_t i = 1; i <= kV1Events; ++i) {
      const NewEvent expected = MakeEvent(i);
      EXPECT_EQ(events[i - 1].seq, i);
      EXPECT_EQ(events[i - 1].time_unix_micros, expected.time_unix_micros) << "seq " << i;
      EXPECT_EQ(events[i - 1].type, expected.type) << "seq " << i;
      EXPECT_EQ(events[i - 1].payload, expected.payload) << "seq " << i;
    }
    EXPECT_EQ(HashToHex(events.back().hash), kV1LastHash);
    auto snapshot = journal->LatestValidSnapshot(0, nullptr);
    ASSERT_TRUE(snapshot.ok() && snapshot->has_value()) << Describe(snapshot.status());
    EXPECT_EQ((*snapshot)->seq, 10U);
    EXPECT_EQ((*snapshot)->payload, "state after 10");
    const VerifyReport report = journal->Verify({});
    EXPECT_TRUE(report.ok) << Describe(report);
    EXPECT_EQ(report.snapshots_checked, 1U);
  }
  // The migrated fixture keeps growing on the same chain.
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  auto seq = writer->Append(MakeEvents(kV1Events + 1, 1));
  ASSERT_TRUE(seq.ok()) << Describe(seq.status());
  EXPECT_EQ(*seq, kV1Events + 1);
  EXPECT_TRUE(writer->Verify({}).ok);
}

}  // namespace
}  // namespace gfp::store
