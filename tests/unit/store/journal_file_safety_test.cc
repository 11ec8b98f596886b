// Issue 8: what a writer does with files that are not (or no longer) whole journals, and with
// paths that are not regular files. Nothing may be overwritten, nothing may be left behind, and
// nothing may hang; the history must live in the main file, not only in the -wal.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <set>

#include "journal_test_util.h"
#include "store/migrations.h"
#include "store/sqlite_status.h"

namespace gfp::store {
namespace {

using testing::MakeEvents;
using testing::OpenOrDie;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::filesystem::path Wal(std::filesystem::path p) { return p += "-wal"; }
std::filesystem::path Shm(std::filesystem::path p) { return p += "-shm"; }

std::set<std::string> Listing(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

// A journal as the plugin used to leave it while running: WAL mode, schema and events only in
// the -wal (never checkpointed), the main file a bare 4 KiB header page without tables.
void MakeJournalLivingInItsWal(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr), SQLITE_OK);
  std::string sql = "PRAGMA journal_mode=WAL; BEGIN;";
  sql += std::string(EmbeddedMigrations()[0].sql);
  sql += "; PRAGMA user_version = 1; PRAGMA application_id = " + std::to_string(kApplicationId) +
         "; COMMIT;";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  ASSERT_GT(std::filesystem::file_size(Wal(path)), 0U);
  ASSERT_EQ(std::filesystem::file_size(path), 4096U) << "expected a bare header page";
}

void ExpectRefusedNamingTheWal(const std::filesystem::path& path) {
  const std::string before = ReadFile(path);
  auto journal = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(journal.ok()) << "a file without journal tables was made a new journal";
  EXPECT_EQ(journal.status().code(), ErrorCode::kDataLoss) << journal.status().message();
  EXPECT_NE(journal.status().message().find("restore " + Wal(path).string() + " beside it"),
            std::string::npos)
      << journal.status().message();
  EXPECT_EQ(ReadFile(path), before) << "the refused file was changed";
}

TEST(JournalLostWalTest, MainFileCopiedWithoutItsWalIsRefused) {
  TempDir dir;
  MakeJournalLivingInItsWal(dir / "journal.db");
  std::filesystem::copy_file(dir / "journal.db", dir / "copy.db");
  ExpectRefusedNamingTheWal(dir / "copy.db");
  EXPECT_FALSE(std::filesystem::exists(dir / "copy.db.lock"));
}

TEST(JournalLostWalTest, DeletedWalIsRefused) {
  TempDir dir;
  const auto path = dir / "journal.db";
  MakeJournalLivingInItsWal(path);
  std::filesystem::remove(Wal(path));
  std::filesystem::remove(Shm(path));
  ExpectRefusedNamingTheWal(path);
}

TEST(JournalLostWalTest, DamagedWalHeaderIsRefusedAndTheWalIsKept) {
  TempDir dir;
  const auto path = dir / "journal.db";
  MakeJournalLivingInItsWal(path);
  std::string wal = ReadFile(Wal(path));
  wal[0] = static_cast<char>(wal[0] ^ 0x5a);  // the magic number: SQLite ignores such a WAL
  WriteFile(Wal(path), wal);
  ExpectRefusedNamingTheWal(path);
  EXPECT_EQ(ReadFile(Wal(path)), wal) << "the damaged -wal (the evidence) was changed or removed";
}

TEST(JournalLostWalTest, WithItsWalTheSameFileOpens) {
  TempDir dir;
  const auto path = dir / "journal.db";
  MakeJournalLivingInItsWal(path);
  auto journal = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  EXPECT_TRUE((*journal)->Append(MakeEvents(1, 2)).ok());
}

TEST(JournalLostWalTest, OneByteFileIsRefusedAndLeftUntouched) {
  TempDir dir;
  const auto path = dir / "journal.db";
  WriteFile(path, "x");
  ExpectRefusedNamingTheWal(path);
  EXPECT_EQ(ReadFile(path), "x");
}

TEST(JournalLostWalTest, ZeroLengthFileBecomesAJournalAndSaysSo) {
  TempDir dir;
  const auto path = dir / "journal.db";
  WriteFile(path, "");
  auto journal = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  EXPECT_NE((*journal)->open_note().find("was an empty file"), std::string::npos)
      << (*journal)->open_note();
  auto created = OpenOrDie(dir / "new.db", OpenMode::kReadWrite);
  EXPECT_NE(created->open_note().find("created a new journal"), std::string::npos)
      << created->open_note();
}

// A creation interrupted by a crash (a process dies mid-transaction on an empty file, leaving
// pages and a hot -journal) rolls back to the empty file, which a writer accepts.
TEST(JournalLostWalTest, CreationInterruptedByACrashIsRolledBackAndAccepted) {
  TempDir dir;
  const auto path = dir / "journal.db";
  WriteFile(path, "");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) ::_exit(1);
    // A one-page cache spills the uncommitted pages into the file.
    sqlite3_exec(db,
                 "PRAGMA cache_size = 1; BEGIN; CREATE TABLE t(x BLOB);"
                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) "
                 "INSERT INTO t SELECT randomblob(1000) FROM n;",
                 nullptr, nullptr, nullptr);
    ::_exit(0);  // dies without COMMIT or ROLLBACK
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_GT(std::filesystem::file_size(path), 0U) << "the crash left no pages behind";
  std::filesystem::path hot = path;
  hot += "-journal";
  ASSERT_TRUE(std::filesystem::exists(hot)) << "the crash left no hot journal";
  auto journal = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  EXPECT_NE((*journal)->open_note().find("was an empty file"), std::string::npos);
}

TEST(JournalLostWalTest, ZeroLengthFileBesideAWalWithDataIsRefused) {
  TempDir dir;
  const auto path = dir / "journal.db";
  MakeJournalLivingInItsWal(path);
  const std::string wal = ReadFile(Wal(path));
  WriteFile(path, "");
  auto journal = Journal::Open(path, OpenMode::kReadWrite);
  ASSERT_FALSE(journal.ok()) << "SQLite would have deleted the -wal of an empty main file";
  EXPECT_EQ(journal.status().code(), ErrorCode::kDataLoss);
  EXPECT_EQ(ReadFile(Wal(path)), wal);
}

// The copy of the main file alone holds what was checkpointed.
std::uint64_t EventsInMainFileAlone(const std::filesystem::path& path, const TempDir& dir) {
  const auto copy = dir / "main-only.db";
  std::filesystem::remove(copy);
  std::filesystem::copy_file(path, copy);
  auto reader = Journal::Open(copy, OpenMode::kReadOnly);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  return reader.ok() ? (*reader)->LastSeq() : 0;
}

TEST(JournalCheckpointTest, IdleCheckpointPutsTheHistoryInTheMainFile) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_TRUE(writer->Append(MakeEvents(1, 5)).ok());
  ASSERT_TRUE(writer->CheckpointIfIdle(std::chrono::hours(1)).ok());
  EXPECT_EQ(EventsInMainFileAlone(path, dir), 0U) << "checkpointed before being idle";
  ASSERT_TRUE(writer->CheckpointIfIdle(std::chrono::seconds(0)).ok());
  EXPECT_EQ(EventsInMainFileAlone(path, dir), 5U);
}

TEST(JournalCheckpointTest, CleanCloseCheckpointsEvenWhileAReaderIsOpen) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);  // SQLite alone checkpoints on last close
  ASSERT_TRUE(writer->Append(MakeEvents(1, 4)).ok());
  writer.reset();
  EXPECT_EQ(EventsInMainFileAlone(path, dir), 4U);
}

TEST(JournalWriterLockTest, HardLinkToTheJournalIsTheSameWriterLock) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto first = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_EQ(::link(path.c_str(), (dir / "link.db").c_str()), 0);
  auto second = Journal::Open(dir / "link.db", OpenMode::kReadWrite);
  ASSERT_FALSE(second.ok()) << "a second writer got in through a hard link";
  EXPECT_EQ(second.status().code(), ErrorCode::kAlreadyExists) << second.status().message();
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
}

// Issue 21, bug 4: a journal deleted or replaced under its writer went unnoticed (appends
// succeeded into the unlinked file, the next start created a new journal: the history was gone).
TEST(JournalMovedTest, ADeletedJournalIsNoticedAndRefusesAppends) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  ASSERT_TRUE(writer->Append(MakeEvents(1, 2)).ok());
  EXPECT_TRUE(writer->CheckStillAtPath().ok());
  EXPECT_TRUE(reader->CheckStillAtPath().ok());

  ASSERT_EQ(::unlink(path.c_str()), 0);
  for (const Journal* journal : {writer.get(), reader.get()}) {
    const Status moved = journal->CheckStillAtPath();
    EXPECT_EQ(moved.code(), ErrorCode::kFailedPrecondition) << moved.message();
    EXPECT_NE(moved.message().find("journal " + path.string() + " was deleted while this process"),
              std::string::npos)
        << moved.message();
  }
  EXPECT_NE(writer->CheckStillAtPath().message().find("/proc/" + std::to_string(::getpid())),
            std::string::npos)
      << "the writer says where the file it holds is still readable";
  const auto appended = writer->Append(MakeEvents(3, 1));
  ASSERT_FALSE(appended.ok()) << "appended into a deleted journal";
  EXPECT_EQ(writer->LastSeq(), 2U);
}

TEST(JournalMovedTest, AReplacedJournalIsNoticed) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_TRUE(writer->Append(MakeEvents(1, 2)).ok());
  WriteFile(dir / "other.db", "");
  ASSERT_EQ(::rename((dir / "other.db").c_str(), path.c_str()), 0);
  const Status moved = writer->CheckStillAtPath();
  EXPECT_NE(moved.message().find("was replaced by another file"), std::string::npos)
      << moved.message();
  EXPECT_FALSE(writer->Append(MakeEvents(3, 1)).ok());
  // A second name for the same file (a hard link) and a rename of the folder's other files are
  // not a move.
  TempDir other;
  auto kept = OpenOrDie(other / "journal.db", OpenMode::kReadWrite);
  ASSERT_EQ(::link((other / "journal.db").c_str(), (other / "copy.db").c_str()), 0);
  EXPECT_TRUE(kept->CheckStillAtPath().ok());
  EXPECT_TRUE(kept->Append(MakeEvents(1, 1)).ok());
}

// Opens in another thread so a hang fails the test instead of blocking it (a FIFO).
Result<std::unique_ptr<Journal>> OpenWithin(const std::filesystem::path& path, OpenMode mode) {
  auto opening = std::async(std::launch::async, [&] { return Journal::Open(path, mode); });
  if (opening.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    ADD_FAILURE() << "opening " << path << " hangs";
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);  // unblocks a FIFO reader
    if (fd >= 0) ::close(fd);
  }
  return opening.get();
}

struct BadPath {
  const char* name;
  const char* words;
  void (*make)(const std::filesystem::path& path, const std::filesystem::path& dir);
};

class JournalBadPathTest : public ::testing::TestWithParam<std::tuple<BadPath, OpenMode>> {};

TEST_P(JournalBadPathTest, IsRefusedInWordsAndNothingIsLeftBehind) {
  const auto& [bad, mode] = GetParam();
  TempDir dir;
  const auto path = dir / "journal.db";
  bad.make(path, dir.path());
  const auto before = Listing(dir.path());
  auto journal = OpenWithin(path, mode);
  ASSERT_FALSE(journal.ok()) << bad.name << " was accepted as a journal";
  EXPECT_NE(journal.status().message().find(bad.words), std::string::npos)
      << journal.status().message();
  EXPECT_NE(journal.status().message().find(path.string()), std::string::npos)
      << journal.status().message();
  EXPECT_EQ(Listing(dir.path()), before) << "a refused open left files behind";
}

const BadPath kBadPaths[] = {
    {"directory", "is a directory",
     [](const std::filesystem::path& p, const std::filesystem::path&) {
       std::filesystem::create_directory(p);
     }},
    {"fifo", "is a FIFO",
     [](const std::filesystem::path& p, const std::filesystem::path&) {
       ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
     }},
    {"symlink", "is a symbolic link",
     [](const std::filesystem::path& p, const std::filesystem::path& dir) {
       { auto j = OpenOrDie(dir / "real.db", OpenMode::kReadWrite); }
       std::filesystem::create_symlink(dir / "real.db", p);
     }},
};

INSTANTIATE_TEST_SUITE_P(
    Paths, JournalBadPathTest,
    ::testing::Combine(::testing::ValuesIn(kBadPaths),
                       ::testing::Values(OpenMode::kReadWrite, OpenMode::kReadOnly)),
    [](const auto& param_info) {
      return std::string(std::get<0>(param_info.param).name) +
             (std::get<1>(param_info.param) == OpenMode::kReadWrite ? "Writer" : "Reader");
    });

// Issue 8, item 8: a journal whose user_version was reset cannot be migrated; say so instead of
// advising `serve`, which would fail on it.
TEST(JournalSchemaTest, TablesWithSchemaVersionZeroAreRefusedByWriterAndReader) {
  TempDir dir;
  const auto path = dir / "journal.db";
  { auto writer = OpenOrDie(path, OpenMode::kReadWrite); }
  {
    testing::RawDb raw(path);
    ASSERT_EQ(raw.Exec("PRAGMA user_version = 0"), SQLITE_OK);
  }
  for (OpenMode mode : {OpenMode::kReadWrite, OpenMode::kReadOnly}) {
    auto journal = Journal::Open(path, mode);
    ASSERT_FALSE(journal.ok());
    EXPECT_EQ(journal.status().code(), ErrorCode::kDataLoss) << journal.status().message();
    EXPECT_NE(journal.status().message().find("schema version 0"), std::string::npos)
        << journal.status().message();
    EXPECT_EQ(journal.status().message().find("start `serve`"), std::string::npos)
        << journal.status().message();
  }
}

TEST(SqliteStatusTest, ExtendedCodesComeWithWords) {
  const auto message = [](int code) {
    return SqliteStatus(code, nullptr, "opening", "/j").message();
  };
  EXPECT_NE(message(SQLITE_CANTOPEN_SYMLINK).find("symbolic link"), std::string::npos)
      << message(SQLITE_CANTOPEN_SYMLINK);
  EXPECT_NE(message(SQLITE_IOERR_READ).find("directory"), std::string::npos)
      << message(SQLITE_IOERR_READ);
  EXPECT_NE(message(SQLITE_READONLY_DIRECTORY).find("read-only"), std::string::npos);
  EXPECT_NE(message(SQLITE_IOERR_FSYNC).find("fsync"), std::string::npos);
}

}  // namespace
}  // namespace gfp::store
