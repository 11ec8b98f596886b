// `journal copy` on the real binary (docs/audit.md): a consistent, self-contained SQLite copy
// taken in one read transaction while a writer appends, that `journal verify` then checks off the
// node; a --to that names anything existing is refused and nothing is written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/temp_dir.h"
#include "integration/cli/verify_head.h"
#include "process/child_process.h"
#include "statemachine/event_codec.h"
#include "store/journal.h"

namespace gfp {
namespace {

using gfp::testing::HeadAnchor;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

process::CommandResult RunBinary(const std::vector<std::string>& args, const fs::path& log) {
  process::ProcessOptions options;
  options.binary = GFP_BINARY;
  options.args = args;
  options.log_path = log;
  auto result = process::RunCommand(options, std::chrono::seconds(60));
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : process::CommandResult{};
}

std::vector<store::NewEvent> Restarts(int count, int first_number) {
  std::vector<store::NewEvent> batch;
  for (int i = 0; i < count; ++i) {
    events::Event e;
    e.set_time_unix_micros(1'900'000'000'000'000 + first_number + i);
    e.mutable_kubelet_restart_observed()->set_reason("restart " + std::to_string(first_number + i));
    batch.push_back({e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e)});
  }
  return batch;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> Listing(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

class JournalCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal = (dir.path() / "journal.db").string();
    fs::copy_file(fs::path(GFP_SOURCE_DIR) / "tests/fixtures/journal-v1-demo-day.db", journal);
    fs::create_directory(out);
  }
  std::string Log() { return (dir.path() / ("run-" + std::to_string(++runs) + ".log")).string(); }
  process::CommandResult Copy(const fs::path& to) {
    return RunBinary({"journal", "copy", "--journal", journal, "--to", to.string()}, Log());
  }
  process::CommandResult Verify(const fs::path& path, const std::string& anchor = "") {
    std::vector<std::string> args = {"journal", "verify", "--journal", path.string()};
    if (!anchor.empty()) args.insert(args.end(), {"--anchor", anchor});
    return RunBinary(args, Log());
  }
  // Runs SQL on the live journal through its own connection.
  void Sql(const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 3000);
    ASSERT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  std::unique_ptr<store::Journal> OpenWriter() {
    auto writer = store::Journal::Open(journal, store::OpenMode::kReadWrite);
    EXPECT_TRUE(writer.ok()) << writer.status().message();
    return writer.ok() ? std::move(*writer) : nullptr;
  }
  testing::TempDir dir;
  fs::path out = dir.path() / "out";
  std::string journal;
  int runs = 0;
};

// The seq `copy` says it copied: "copied as of seq N (".
std::string CopiedSeq(const std::string& output) {
  static const std::regex kSeq("copied as of seq ([0-9]+) \\(");
  std::smatch match;
  return std::regex_search(output, match, kSeq) ? match[1].str() : "none";
}

// Copies taken while a writer appends in batches: each is one snapshot (it verifies, and the seq
// copy reports is the copy's head), and its head is an event of the live chain.
TEST_F(JournalCopyTest, ACopyWhileAWriterAppendsIsIntactAndAPrefixOfTheLiveChain) {
  auto writer = OpenWriter();
  ASSERT_NE(writer, nullptr);
  std::atomic<bool> stop{false};
  std::atomic<int> appended{0};
  std::thread appender([&] {
    for (int n = 1; !stop; n += 7) {
      if (!writer->Append(Restarts(7, n)).ok()) return;
      appended += 7;
    }
  });
  std::vector<std::string> heads;
  for (int i = 0; i < 6; ++i) {
    const fs::path copy = out / ("copy-" + std::to_string(i) + ".db");
    auto copied = Copy(copy);
    ASSERT_EQ(copied.status.ShellCode(), 0) << copied.output;
    auto verified = Verify(copy);
    EXPECT_EQ(verified.status.ShellCode(), 0) << verified.output;
    heads.push_back(HeadAnchor(verified.output));
    EXPECT_EQ(CopiedSeq(copied.output), heads.back().substr(0, heads.back().find(':')))
        << copied.output << verified.output;
  }
  stop = true;
  appender.join();
  writer.reset();
  EXPECT_GT(appended.load(), 0);
  for (const std::string& head : heads) {
    auto live = Verify(journal, head);
    EXPECT_EQ(live.status.ShellCode(), 0) << head << "\n" << live.output;
  }
  EXPECT_NE(heads.front(), heads.back()) << "the writer appended nothing between the copies";
}

// Tampering done while serve holds the journal open (so it sits in the -wal) is in the copy.
TEST_F(JournalCopyTest, TheCopyOfATamperedJournalFailsVerify) {
  auto writer = OpenWriter();
  ASSERT_NE(writer, nullptr);
  Sql("UPDATE events SET time_us = time_us + 1 WHERE seq = 10");
  const fs::path copy = out / "copy.db";
  auto copied = Copy(copy);
  ASSERT_EQ(copied.status.ShellCode(), 0) << copied.output;
  auto verified = Verify(copy);
  EXPECT_EQ(verified.status.ShellCode(), 1) << verified.output;
  EXPECT_THAT(verified.output, HasSubstr("is damaged at seq 10"));
}

// An anchor of the live journal (its last events still in the -wal) holds on the copy; after a
// re-chained forgery, the copy fails it as the live journal does.
TEST_F(JournalCopyTest, AnAnchorOfTheLiveJournalChecksOnTheCopy) {
  auto writer = OpenWriter();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Append(Restarts(3, 1)).ok());
  const std::string anchor = HeadAnchor(Verify(journal).output);
  ASSERT_EQ(anchor.substr(0, 3), "46:");
  ASSERT_TRUE(writer->Append(Restarts(2, 10)).ok());
  auto copied = Copy(out / "copy.db");
  ASSERT_EQ(copied.status.ShellCode(), 0) << copied.output;
  auto on_copy = Verify(out / "copy.db", anchor);
  EXPECT_EQ(on_copy.status.ShellCode(), 0) << on_copy.output;
  EXPECT_THAT(on_copy.output, HasSubstr("anchor seq 46 matches"));
  EXPECT_EQ(HeadAnchor(on_copy.output), HeadAnchor(Verify(journal, anchor).output));
  // Root on the node rewrites history from seq 46 on, chained anew: plain verify passes it.
  writer.reset();
  Sql("DELETE FROM snapshots WHERE seq >= 46; DELETE FROM event_subjects WHERE seq >= 46; "
      "DELETE FROM events WHERE seq >= 46");
  const fs::path forged_copy = out / "forged.db";
  {
    auto rewriter = OpenWriter();
    ASSERT_NE(rewriter, nullptr);
    ASSERT_TRUE(rewriter->Append(Restarts(5, 500)).ok());  // a different history from seq 46
  }
  ASSERT_EQ(Copy(forged_copy).status.ShellCode(), 0);
  EXPECT_EQ(Verify(forged_copy).status.ShellCode(), 0);
  auto forged = Verify(forged_copy, anchor);
  EXPECT_EQ(forged.status.ShellCode(), 1) << forged.output;
  EXPECT_THAT(forged.output, HasSubstr("anchor check failed: event seq 46 has chain hash"));
}

// Events only in the -wal (the writer is open, nothing checkpointed) are in the copy, and the
// copy stands alone: no -wal or -shm beside it, before or after it is verified, also moved alone.
TEST_F(JournalCopyTest, EventsOnlyInTheWalAreInTheSelfContainedCopy) {
  auto writer = OpenWriter();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Append(Restarts(20, 1)).ok());
  ASSERT_GT(fs::file_size(journal + "-wal"), 0u);
  const fs::path copy = out / "copy.db";
  auto copied = Copy(copy);
  ASSERT_EQ(copied.status.ShellCode(), 0) << copied.output;
  EXPECT_EQ(Listing(out), std::set<std::string>{"copy.db"});
  EXPECT_EQ((fs::status(copy).permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
  const fs::path alone = dir.path() / "alone";
  fs::create_directory(alone);
  fs::rename(copy, alone / "moved.db");
  auto verified = Verify(alone / "moved.db");
  EXPECT_EQ(verified.status.ShellCode(), 0) << verified.output;
  EXPECT_EQ(HeadAnchor(verified.output).substr(0, 3), "63:");
  EXPECT_EQ(Listing(alone), std::set<std::string>{"moved.db"});
}

// `--to -`: the database on stdout, which verifies; the summary goes to stderr.
TEST_F(JournalCopyTest, ToStdoutWritesADatabaseThatVerifies) {
  auto writer = OpenWriter();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Append(Restarts(4, 1)).ok());
  const fs::path copy = out / "piped.db";
  process::ProcessOptions options;
  options.binary = "/bin/bash";
  options.args = {"-c", "\"$0\" journal copy --journal \"$1\" --to - >\"$2\"", GFP_BINARY, journal,
                  copy.string()};
  options.log_path = Log();
  auto run = process::RunCommand(options, std::chrono::seconds(60));
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status.ShellCode(), 0) << run->output;
  EXPECT_THAT(run->output, HasSubstr("copied as of seq 47 ("));
  EXPECT_EQ(ReadAll(copy).substr(0, 16), std::string("SQLite format 3\0", 16));
  auto verified = Verify(copy);
  EXPECT_EQ(verified.status.ShellCode(), 0) << verified.output;
  EXPECT_EQ(HeadAnchor(verified.output).substr(0, 3), "47:");
}

// A --to naming a file, a symlink (to a file, or dangling) or a FIFO: exit 2, nothing written,
// what was there untouched, no temporary file left.
TEST_F(JournalCopyTest, AnExistingDestinationIsRefusedAndNothingIsWritten) {
  const fs::path file = out / "file.db";
  std::ofstream(file) << "keep me";
  const fs::path target = dir.path() / "target";
  std::ofstream(target) << "target";
  const fs::path link = out / "link.db";
  fs::create_symlink(target, link);
  const fs::path dangling = out / "dangling.db";
  const fs::path nowhere = dir.path() / "nowhere.db";
  fs::create_symlink(nowhere, dangling);
  const fs::path fifo = out / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto before = Listing(out);
  for (const auto& [path, kind] :
       std::vector<std::pair<fs::path, std::string>>{{file, "a file"},
                                                     {link, "a symbolic link"},
                                                     {dangling, "a symbolic link"},
                                                     {fifo, "a FIFO"}}) {
    auto run = Copy(path);
    EXPECT_EQ(run.status.ShellCode(), 2) << path << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("already exists (" + kind +
                                      "); refusing to replace it: nothing was written"));
  }
  EXPECT_EQ(Listing(out), before);
  EXPECT_TRUE(ReadAll(file) == "keep me") << file << " was overwritten";
  EXPECT_TRUE(ReadAll(target) == "target") << target << " was written through the symlink";
  EXPECT_FALSE(fs::exists(nowhere));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::is_fifo(fifo));
  // A folder that does not exist, and an empty value: exit 2 too.
  EXPECT_EQ(Copy(out / "no-such-folder" / "copy.db").status.ShellCode(), 2);
  auto empty = RunBinary({"journal", "copy", "--journal", journal, "--to="}, Log());
  EXPECT_EQ(empty.status.ShellCode(), 2) << empty.output;
  EXPECT_EQ(Listing(out), before);
}

}  // namespace
}  // namespace gfp
