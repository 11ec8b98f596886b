// Opening journals: creation, permissions, the writer lock, read-only access, and clear errors
// for files that are missing, not SQLite, not a journal, or of a newer schema.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "journal_test_util.h"
#include "store/background_verifier.h"
#include "store/migrations.h"

namespace gfp::store {
namespace {

using testing::MakeEvents;
using testing::OpenOrDie;
using testing::RawDb;
using testing::ReadAll;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

unsigned Mode(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return 0xffffffffU;
  return st.st_mode & 07777U;
}

// Restores the umask on scope exit; tests set umask 0 to prove modes do not depend on it.
class UmaskGuard {
 public:
  explicit UmaskGuard(mode_t m) : old_(::umask(m)) {}
  ~UmaskGuard() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(JournalOpenTest, CreatesPrivateDirectoriesAndFilesRegardlessOfUmask) {
  TempDir dir;
  UmaskGuard umask_guard(0);
  const auto path = dir / "a/b/journal.db";
  auto journal = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(journal, nullptr);
  ASSERT_TRUE(journal->Append(MakeEvents(1, 3)).ok());  // makes SQLite create -wal and -shm
  auto p = [](std::filesystem::path base, const char* suffix) { return base += suffix; };
  EXPECT_EQ(Mode(dir / "a"), 0700U) << dir / "a";
  EXPECT_EQ(Mode(dir / "a/b"), 0700U) << dir / "a/b";
  EXPECT_EQ(Mode(path), 0600U) << path;
  EXPECT_FALSE(std::filesystem::exists(p(path, ".lock"))) << "the lock is on the journal itself";
  ASSERT_TRUE(std::filesystem::exists(p(path, "-wal"))) << "journal is not in WAL mode";
  EXPECT_EQ(Mode(p(path, "-wal")), 0600U);
  EXPECT_EQ(Mode(p(path, "-shm")), 0600U);
}

TEST(JournalOpenTest, ExistingDirectoryModeIsLeftAloneButFileModeIsFixed) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
  const auto path = dir / "journal.db";
  { auto j = OpenOrDie(path, OpenMode::kReadWrite); }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  { auto j = OpenOrDie(path, OpenMode::kReadWrite); }
  EXPECT_EQ(Mode(dir.path()), 0755U) << "an operator's existing directory was changed";
  EXPECT_EQ(Mode(path), 0600U) << "a journal opened for writing must end up 0600";
}

TEST(JournalOpenTest, NewJournalHasLatestSchemaApplicationIdAndWal) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto journal = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_NE(journal, nullptr);
    EXPECT_EQ(journal->SchemaVersion(), Journal::kLatestSchemaVersion);
    EXPECT_EQ(journal->LastSeq(), 0U);
    EXPECT_EQ(journal->path(), path);
  }
  RawDb raw(path);
  EXPECT_EQ(raw.QueryInt("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(raw.QueryInt("PRAGMA user_version"), Journal::kLatestSchemaVersion);
  EXPECT_EQ(raw.QueryText("PRAGMA journal_mode"), "wal");
}

TEST(JournalOpenTest, ReopenKeepsTailAndContinuesTheChain) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto journal = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(journal->Append(MakeEvents(1, 4)).ok());
    ASSERT_TRUE(journal->Append(MakeEvents(5, 6)).ok());
  }
  auto journal = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(journal, nullptr);
  EXPECT_EQ(journal->LastSeq(), 10U);
  auto seq = journal->Append(MakeEvents(11, 1));
  ASSERT_TRUE(seq.ok()) << seq.status().message();
  EXPECT_EQ(*seq, 11U);
  const VerifyReport report = journal->Verify({});
  EXPECT_TRUE(report.ok) << testing::Describe(report);
  EXPECT_EQ(report.events_checked, 11U);
}

TEST(JournalOpenTest, SecondWriterIsRefusedAtOnceNamingPathAndPid) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto first = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(first, nullptr);
  const auto start = std::chrono::steady_clock::now();
  auto second = Journal::Open(path, OpenMode::kReadWrite);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(second.ok()) << "a second writer was allowed on " << path;
  EXPECT_EQ(second.status().code(), ErrorCode::kAlreadyExists)
      << testing::Describe(second.status());
  EXPECT_NE(second.status().message().find(path.string()), std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  EXPECT_LT(waited, std::chrono::seconds(1)) << "the second writer waited instead of failing";
  // The first writer is unaffected.
  EXPECT_TRUE(first->Append(MakeEvents(1, 1)).ok());
}

TEST(JournalOpenTest, WriterLockIsReleasedOnClose) {
  TempDir dir;
  const auto path = dir / "journal.db";
  { auto first = OpenOrDie(path, OpenMode::kReadWrite); }
  auto again = Journal::Open(path, OpenMode::kReadWrite);
  EXPECT_TRUE(again.ok()) << testing::Describe(again.status());
}

TEST(JournalOpenTest, ReadOnlyWorksWhileWriterIsOpenAndSeesNewCommits) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_TRUE(writer->Append(MakeEvents(1, 3)).ok());
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->LastSeq(), 3U);
  EXPECT_EQ(ReadAll(*reader).size(), 3U);
  ASSERT_TRUE(writer->Append(MakeEvents(4, 2)).ok());
  EXPECT_EQ(ReadAll(*reader).size(), 5U) << "the reader does not see the writer's new commit";
  EXPECT_EQ(reader->LastSeq(), 5U);
  const VerifyReport report = reader->Verify({});
  EXPECT_TRUE(report.ok) << testing::Describe(report);

  auto append = reader->Append(MakeEvents(6, 1));
  ASSERT_FALSE(append.ok());
  EXPECT_EQ(append.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(reader->SaveSnapshot(1, "x").code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(reader->PruneSnapshots(1).status().code(), ErrorCode::kFailedPrecondition);
}

TEST(JournalOpenTest, ReadOnlyAfterWriterClosedNeedsNoWalFiles) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 2)).ok());
  }
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(ReadAll(*reader).size(), 2U);
}

TEST(JournalOpenTest, ReadOnlyMissingFileIsNotFoundAndCreatesNothing) {
  TempDir dir;
  const auto path = dir / "sub/journal.db";
  auto journal = Journal::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), ErrorCode::kNotFound) << testing::Describe(journal.status());
  EXPECT_NE(journal.status().message().find(path.string()), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "sub")) << "read-only open created a directory";
}

TEST(JournalOpenTest, EmptyPathIsRejected) {
  auto journal = Journal::Open("", OpenMode::kReadWrite);
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), ErrorCode::kInvalidArgument);
}

class JournalOpenBadFileTest : public ::testing::TestWithParam<OpenMode> {};

TEST_P(JournalOpenBadFileTest, NonSqliteFileIsRejectedAndLeftUntouched) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::string garbage;
  for (int i = 0; i < 200; ++i) garbage += "this is not a database. ";
  WriteFile(path, garbage);
  auto journal = Journal::Open(path, GetParam());
  ASSERT_FALSE(journal.ok()) << "a text file was accepted as a journal";
  EXPECT_EQ(journal.status().code(), ErrorCode::kInvalidArgument)
      << testing::Describe(journal.status());
  EXPECT_NE(journal.status().message().find("not an SQLite database"), std::string::npos)
      << journal.status().message();
  EXPECT_NE(journal.status().message().find(path.string()), std::string::npos);
  EXPECT_EQ(ReadFile(path), garbage) << "the foreign file was modified";
}

TEST_P(JournalOpenBadFileTest, SqliteFileThatIsNotAJournalIsRejectedAndLeftUntouched) {
  TempDir dir;
  const auto path = dir / "other.db";
  {
    RawDb raw(path, /*create=*/true);
    ASSERT_EQ(raw.Exec("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)"), SQLITE_OK);
  }
  auto journal = Journal::Open(path, GetParam());
  ASSERT_FALSE(journal.ok()) << "a foreign SQLite database was accepted as a journal";
  EXPECT_EQ(journal.status().code(), ErrorCode::kInvalidArgument)
      << testing::Describe(journal.status());
  EXPECT_NE(journal.status().message().find("is not a gpu-fabric-plugin journal"),
            std::string::npos)
      << journal.status().message();
  RawDb raw(path);
  EXPECT_EQ(raw.QueryText("PRAGMA journal_mode"), "delete")
      << "the foreign file was switched to WAL";
  EXPECT_EQ(raw.QueryInt("PRAGMA user_version"), 0);
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM sqlite_master"), 1);
}

TEST_P(JournalOpenBadFileTest, OtherApplicationIdIsRejected) {
  TempDir dir;
  const auto path = dir / "other.db";
  {
    RawDb raw(path, /*create=*/true);
    ASSERT_EQ(raw.Exec("PRAGMA application_id = 42"), SQLITE_OK);
  }
  auto journal = Journal::Open(path, GetParam());
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(journal.status().message().find("0x0000002a"), std::string::npos)
      << journal.status().message();
}

TEST_P(JournalOpenBadFileTest, NewerSchemaIsRejectedWithBothVersions) {
  TempDir dir;
  const auto path = dir / "journal.db";
  { auto writer = OpenOrDie(path, OpenMode::kReadWrite); }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("PRAGMA user_version = 7"), SQLITE_OK);
  }
  auto journal = Journal::Open(path, GetParam());
  ASSERT_FALSE(journal.ok()) << "a journal of schema 7 was accepted";
  EXPECT_EQ(journal.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(journal.status().message(), "journal " + path.string() +
                                            " has schema version 7; this binary supports up to " +
                                            std::to_string(Journal::kLatestSchemaVersion));
  RawDb raw(path);
  EXPECT_EQ(raw.QueryInt("PRAGMA user_version"), 7) << "the newer journal was modified";
}

INSTANTIATE_TEST_SUITE_P(BothModes, JournalOpenBadFileTest,
                         ::testing::Values(OpenMode::kReadWrite, OpenMode::kReadOnly),
                         [](const auto& param_info) {
                           return param_info.param == OpenMode::kReadWrite ? "ReadWrite"
                                                                           : "ReadOnly";
                         });

TEST(JournalOpenTest, EmptyFileBecomesAJournalForAWriterButNotForAReader) {
  TempDir dir;
  const auto path = dir / "journal.db";
  WriteFile(path, "");
  auto reader = Journal::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), ErrorCode::kInvalidArgument);
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(writer.ok()) << testing::Describe(writer.status());
  EXPECT_EQ((*writer)->SchemaVersion(), Journal::kLatestSchemaVersion);
}

TEST(JournalOpenTest, StampedButUnmigratedJournalIsMigratedByWriterOnly) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    RawDb raw(path, /*create=*/true);
    ASSERT_EQ(raw.Exec("PRAGMA application_id = " + std::to_string(kApplicationId)), SQLITE_OK);
  }
  auto reader = Journal::Open(path, OpenMode::kReadOnly);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("needs migrating"), std::string::npos)
      << reader.status().message();
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(writer, nullptr);
  EXPECT_TRUE(writer->Append(MakeEvents(1, 1)).ok());
}

TEST(JournalOpenTest, WriterRefusesCorruptTailNamingTheSeqButReaderCanInspectIt) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 100)).ok());
  }
  {
    RawDb raw(path);
    std::string payload = raw.ReadBytes("events", "payload", 90);
    payload[0] = static_cast<char>(payload[0] ^ 0x01);
    ASSERT_EQ(raw.WriteBlob("events", "payload", 90, payload), SQLITE_OK) << raw.last_error();
  }
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(writer.ok()) << "a writer accepted a journal with a corrupt tail";
  EXPECT_EQ(writer.status().code(), ErrorCode::kDataLoss);
  EXPECT_NE(writer.status().message().find("corrupt at seq 90"), std::string::npos)
      << writer.status().message();
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  ASSERT_NE(reader, nullptr);
  const VerifyReport report = reader->Verify({});
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 90U) << testing::Describe(report);
}

TEST(JournalOpenTest, WriterRefusesAGapInTheTail) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 100)).ok());
  }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("DELETE FROM events WHERE seq = 95"), SQLITE_OK);
  }
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), ErrorCode::kDataLoss);
  EXPECT_NE(writer.status().message().find("seq 95 is missing"), std::string::npos)
      << writer.status().message();
}

// SPEC §5: damage in what the state is rebuilt from (the newest valid snapshot's event and every
// event after it) stops the writer; damage in older history does not, and is found by the
// background verification.
TEST(JournalOpenTest, WithoutSnapshotsTheWholeChainIsCheckedAtOpen) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 200)).ok());
  }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.WriteInt("events", "time_us", 5, 12345), SQLITE_OK);
  }
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(writer.ok()) << "damage 195 events before the end was accepted";
  EXPECT_EQ(writer.status().code(), ErrorCode::kDataLoss);
  EXPECT_NE(writer.status().message().find("corrupt at seq 5"), std::string::npos)
      << writer.status().message();
}

TEST(JournalOpenTest, DamageAfterTheNewestSnapshotStopsTheWriter) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 200)).ok());
    ASSERT_TRUE(writer->SaveSnapshot(100, "state").ok());
  }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.WriteInt("events", "time_us", 101, 12345), SQLITE_OK);
  }
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find("corrupt at seq 101"), std::string::npos)
      << writer.status().message();
}

TEST(JournalOpenTest, DamageBeforeTheNewestSnapshotIsLeftToTheBackgroundVerifier) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 200)).ok());
    ASSERT_TRUE(writer->SaveSnapshot(150, "state").ok());
  }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.WriteInt("events", "time_us", 5, 12345), SQLITE_OK);
  }
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(writer, nullptr) << "damage in old history stopped the writer";
  EXPECT_EQ(writer->ChainCheckedFrom(), 150U);
  auto verifier = BackgroundVerifier::Start(path);
  for (int i = 0; i < 500 && !verifier->done(); ++i) {
    ASSERT_TRUE(writer->Append(MakeEvents(1000 + i, 1)).ok()) << "the verifier blocked appends";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(verifier->done());
  EXPECT_EQ(verifier->first_damaged_seq(), 5U) << testing::Describe(verifier->report());
  EXPECT_FALSE(verifier->ok());
}

TEST(JournalOpenTest, BackgroundVerifierReportsZeroForAnIntactJournalAndStopsOnRequest) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_TRUE(writer->Append(MakeEvents(1, 50)).ok());
  auto verifier = BackgroundVerifier::Start(path);
  for (int i = 0; i < 500 && !verifier->done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(verifier->done());
  EXPECT_EQ(verifier->first_damaged_seq(), 0U);
  EXPECT_TRUE(verifier->ok()) << testing::Describe(verifier->report());
  auto stopped = BackgroundVerifier::Start(path);
  stopped->Stop();  // returns promptly, whatever it had done
  EXPECT_EQ(stopped->first_damaged_seq(), 0U);
}

TEST(JournalOpenTest, SnapshotBeyondTheLastEventStopsTheWriter) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 100)).ok());
    ASSERT_TRUE(writer->SaveSnapshot(90, "state").ok());
  }
  {
    RawDb raw(path);
    ASSERT_EQ(raw.Exec("DELETE FROM events WHERE seq > 80"), SQLITE_OK);  // a deleted tail
  }
  auto writer = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(writer.ok()) << "a journal whose newest events were deleted was accepted";
  EXPECT_EQ(writer.status().code(), ErrorCode::kDataLoss);
  EXPECT_NE(writer.status().message().find("after seq 90 but its events end at seq 80"),
            std::string::npos)
      << writer.status().message();
}

TEST(JournalOpenTest, HashMismatchMessagesShowWholeHashes) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    ASSERT_TRUE(writer->Append(MakeEvents(1, 3)).ok());
  }
  {
    RawDb raw(path);
    // Only the last byte of the stored hash differs: a prefix would print two equal strings.
    std::string hash = raw.ReadBytes("events", "hash", 3);
    hash[31] = static_cast<char>(hash[31] ^ 0x01);
    ASSERT_EQ(raw.WriteBlob("events", "hash", 3, hash), SQLITE_OK);
  }
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  const VerifyReport report = reader->Verify({});
  ASSERT_FALSE(report.ok);
  const auto stored = report.reason.find("stored hash ");
  const auto recomputed = report.reason.find("recomputed hash ");
  ASSERT_NE(stored, std::string::npos) << report.reason;
  ASSERT_NE(recomputed, std::string::npos) << report.reason;
  const auto hex_at = [&](std::size_t pos) {
    const auto end = report.reason.find_first_not_of("0123456789abcdef", pos);
    return report.reason.substr(pos, end - pos);
  };
  EXPECT_NE(hex_at(stored + 12), hex_at(recomputed + 16)) << report.reason;
  EXPECT_EQ(hex_at(stored + 12).size(), 64U) << report.reason;
}

}  // namespace
}  // namespace gfp::store
