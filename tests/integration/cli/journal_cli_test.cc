// `gpu-fabric-plugin journal …` as an operator runs it: the real binary on real journals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "common/temp_dir.h"
#include "engine/engine.h"

namespace gfp {
namespace {

using ::testing::HasSubstr;

using gfp::testing::Cli;
using gfp::testing::CliOutput;
using gfp::testing::CliRun;
using gfp::testing::RunProgram;

class JournalCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal = (dir.path() / "journal.db").string();
    std::filesystem::copy_file(
        std::filesystem::path(GFP_SOURCE_DIR) / "tests/fixtures/journal-v1-demo-day.db", journal);
  }
  void Sql(const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << (error ? error : "") << " in " << statement;
    sqlite3_close(db);
  }
  gfp::testing::TempDir dir;
  std::string journal;
};

TEST_F(JournalCliTest, VerifyPassesOnAnIntactJournal) {
  CliRun run = Cli("journal verify --journal " + journal);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("is intact: 43 events"));
}

// One byte of one event flipped with plain SQL: verify names that seq.
std::size_t Occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(JournalCliTest, VerifyNamesTheSeqOfAFlippedByte) {
  for (int seq : {1, 17, 43}) {
    std::filesystem::remove(journal);
    SetUp();  // a fresh copy for each seq
    Sql("UPDATE events SET payload = CAST(substr(payload, 1, 3) || "
        "char((unicode(substr(payload, 4, 1)) + 1) % 128) || substr(payload, 5) AS BLOB) "
        "WHERE seq = " +
        std::to_string(seq));
    CliRun run = Cli("journal verify --journal " + journal);
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_THAT(run.output, HasSubstr("damaged at seq " + std::to_string(seq))) << run.output;
    EXPECT_THAT(run.output, HasSubstr("does not match the recomputed hash")) << run.output;
    // Issue 8: the message once had the same prefix twice. Each part is said once, by verify and
    // by a reading verb.
    CliRun history = Cli("journal history --journal " + journal);
    EXPECT_EQ(history.exit_code, 1) << history.output;
    for (const CliRun* r : {&run, &history}) {
      EXPECT_EQ(Occurrences(r->output, journal), 1u) << r->output;
      EXPECT_EQ(Occurrences(r->output, "damaged at seq"), 1u) << r->output;
      EXPECT_EQ(Occurrences(r->output, "stored hash"), 1u) << r->output;
    }
  }
}

TEST_F(JournalCliTest, VerifyNamesADeletedEvent) {
  Sql("DELETE FROM events WHERE seq = 30");
  CliRun run = Cli("journal verify --journal " + journal);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("seq 30"));
}

TEST_F(JournalCliTest, HistoryTextAndJsonAgree) {
  CliRun text = Cli("journal history --journal " + journal);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_EQ(std::count(text.output.begin(), text.output.end(), '\n'), 43);
  EXPECT_THAT(text.output, HasSubstr("AllocationGranted  alloc-1 granted partition 5"));
  CliRun json = Cli("journal history --format json --journal " + journal);
  ASSERT_EQ(json.exit_code, 0);
  std::istringstream lines(json.output);
  std::string line;
  std::uint64_t expected_seq = 1;
  while (std::getline(lines, line)) {
    auto object = nlohmann::json::parse(line);
    EXPECT_EQ(object["seq"].get<std::uint64_t>(), expected_seq++);
    EXPECT_TRUE(object.contains("time"));
    EXPECT_TRUE(object.contains("type"));
    EXPECT_EQ(object["time"].get<std::string>().back(), 'Z');
  }
  EXPECT_EQ(expected_seq, 44u);
  CliRun exported = Cli("journal export --journal " + journal);
  EXPECT_EQ(exported.output, json.output);
}

TEST_F(JournalCliTest, HistoryFilters) {
  CliRun partition = Cli("journal history --partition 12 --format json --journal " + journal);
  ASSERT_EQ(partition.exit_code, 0);
  std::istringstream lines(partition.output);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    auto object = nlohmann::json::parse(line);
    EXPECT_TRUE(object.dump().find("12") != std::string::npos) << line;
    ++count;
  }
  EXPECT_GE(count, 5);  // requested, activated, granted, deactivation requested, deactivated
  CliRun device = Cli("journal history --device 0000:61:00.0 --journal " + journal);
  EXPECT_THAT(device.output, HasSubstr("alloc-3"));
  EXPECT_THAT(device.output, ::testing::Not(HasSubstr("alloc-1 ")));
  CliRun since = Cli("journal history --since 2100-01-01T00:00:00Z --journal " + journal);
  EXPECT_EQ(since.exit_code, 0);
  EXPECT_EQ(since.output, "");
  CliRun bad = Cli("journal history --since yesterday --journal " + journal);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--since"));
}

TEST_F(JournalCliTest, StateJsonAtASeq) {
  CliRun run = Cli("journal state --at 20 --format json --journal " + journal);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto state = nlohmann::json::parse(run.output);
  EXPECT_EQ(state["last_seq"], 20);
  ASSERT_EQ(state["active_partitions"].size(), 3u);
  const auto& first = state["active_partitions"][0];
  EXPECT_EQ(first["partition_id"], 1);
  EXPECT_EQ(first["pod"], "vms/virt-launcher-vm-b");
  EXPECT_EQ(first["allocation_id"], "alloc-2");
  EXPECT_EQ(first["devices"].size(), 4u);
  CliRun beyond = Cli("journal state --at 999 --journal " + journal);
  EXPECT_EQ(beyond.exit_code, 2);
  EXPECT_THAT(beyond.output, HasSubstr("beyond the journal's last seq 43"));
}

TEST_F(JournalCliTest, ClearErrorsForFilesThatAreNotJournals) {
  CliRun missing = Cli("journal verify --journal " + (dir.path() / "nope.db").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("does not exist"));
  const auto text = dir.path() / "text.db";
  std::ofstream(text) << "hello, I am not a database\n";
  CliRun not_sqlite = Cli("journal history --journal " + text.string());
  EXPECT_EQ(not_sqlite.exit_code, 2);
  EXPECT_THAT(not_sqlite.output, HasSubstr("not an SQLite database"));
  Sql("PRAGMA user_version = 7");
  CliRun newer = Cli("journal state --journal " + journal);
  EXPECT_EQ(newer.exit_code, 2);
  EXPECT_THAT(newer.output, HasSubstr("schema version 7"));
}

// Issue 8, item 4: a verb whose output could not be written must not exit 0.
TEST_F(JournalCliTest, VerbsFailWhenTheirOutputCannotBeWritten) {
  for (const std::string verb : {"history", "export", "state", "verify"}) {
    CliRun run = Cli("journal " + verb + " --journal " + journal, CliOutput::kStderrStdoutFull);
    EXPECT_EQ(run.exit_code, 1) << verb << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("writing the output failed")) << verb;
  }
}

// Item 5: --journal wins over GPU_FABRIC_JOURNAL for every verb; the variable fills in only
// when the flag is absent.
TEST_F(JournalCliTest, JournalFlagWinsOverTheEnvironmentForEveryVerb) {
  const std::map<std::string, std::string> env = {
      {"GPU_FABRIC_JOURNAL", (dir.path() / "absent.db").string()}};
  for (const std::string verb : {"history", "export", "state", "verify"}) {
    const CliRun run =
        RunProgram(std::string(GFP_BINARY) + " journal " + verb + " --journal " + journal,
                   CliOutput::kBoth, env);
    EXPECT_EQ(run.exit_code, 0) << verb << " used the environment over --journal: " << run.output;
  }
  ::setenv("GPU_FABRIC_JOURNAL", journal.c_str(), 1);
  CliRun from_env = Cli("journal state --format json");
  ::unsetenv("GPU_FABRIC_JOURNAL");
  EXPECT_EQ(from_env.exit_code, 0) << from_env.output;
}

// Item 6: a missing seq or a broken chain stops history/export/state at that seq with exit 1.
TEST_F(JournalCliTest, ReadingVerbsStopAtAMissingSeq) {
  Sql("DELETE FROM events WHERE seq = 30");
  for (const std::string verb : {"history", "export"}) {
    CliRun out = Cli("journal " + verb + " --journal " + journal, CliOutput::kStdout);
    EXPECT_EQ(out.exit_code, 1) << verb;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 29) << out.output;
    CliRun err = Cli("journal " + verb + " --journal " + journal, CliOutput::kStderr);
    EXPECT_THAT(err.output, HasSubstr("damaged at seq 30")) << verb;
  }
  // state checks what it replays: from seq 1 here (the fixture's only snapshot is at 43).
  CliRun state = Cli("journal state --at 35 --journal " + journal);
  EXPECT_EQ(state.exit_code, 1) << state.output;
  EXPECT_THAT(state.output, HasSubstr("seq 30"));
}

TEST_F(JournalCliTest, ReadingVerbsStopAtABrokenChain) {
  Sql("UPDATE events SET time_us = time_us + 1 WHERE seq = 17");
  for (const std::string verb : {"history", "export", "state --at 35"}) {
    CliRun run = Cli("journal " + verb + " --journal " + journal, CliOutput::kStderr);
    EXPECT_EQ(run.exit_code, 1) << verb;
    EXPECT_THAT(run.output, HasSubstr("damaged at seq 17")) << verb;
  }
}

// Item 8.
TEST_F(JournalCliTest, StateAtRejectsNegativeAndZeroIsBeforeAnyEvent) {
  CliRun negative = Cli("journal state --at -1 --journal " + journal);
  EXPECT_NE(negative.exit_code, 0) << negative.output;
  EXPECT_THAT(negative.output, ::testing::Not(HasSubstr("18446744073709551615")));
  CliRun zero = Cli("journal state --at 0 --format json --journal " + journal);
  ASSERT_EQ(zero.exit_code, 0) << zero.output;
  auto state = nlohmann::json::parse(zero.output);
  EXPECT_EQ(state["last_seq"], 0);
  EXPECT_EQ(state["active_partitions"].size(), 0u);
}

TEST_F(JournalCliTest, SinceRejectsFieldsOutOfRange) {
  for (const std::string since : {"2026-13-01T00:00:00Z", "2026-01-01T99:00:00Z",
                                  "2026-02-30T00:00:00Z", "2026-01-01T00:61:00Z"}) {
    CliRun run = Cli("journal history --since " + since + " --journal " + journal);
    EXPECT_EQ(run.exit_code, 2) << since << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("out of range")) << since;
  }
}

TEST_F(JournalCliTest, SchemaVersionZeroWithTablesGivesAdviceThatHolds) {
  Sql("PRAGMA user_version = 0");
  CliRun run = Cli("journal state --journal " + journal);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("schema version 0"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("start `serve`"))) << run.output;
}

TEST_F(JournalCliTest, DirectoriesAndSymlinksAreRefusedInWords) {
  const auto directory = dir.path() / "isdir.db";
  std::filesystem::create_directory(directory);
  CliRun on_dir = Cli("journal history --journal " + directory.string());
  EXPECT_EQ(on_dir.exit_code, 2);
  EXPECT_THAT(on_dir.output, HasSubstr("is a directory"));
  EXPECT_THAT(on_dir.output, ::testing::Not(HasSubstr("code 266")));
  const auto link = dir.path() / "link.db";
  std::filesystem::create_symlink(journal, link);
  CliRun on_link = Cli("journal verify --journal " + link.string());
  EXPECT_EQ(on_link.exit_code, 2);
  EXPECT_THAT(on_link.output, HasSubstr("is a symbolic link"));
}

// Item 9: an ID with a newline must not forge a history line.
TEST_F(JournalCliTest, HistoryEscapesControlCharactersInEveryField) {
  const auto path = dir.path() / "forged.db";
  {
    auto engine = engine::Engine::Open(path);
    ASSERT_TRUE(engine.ok()) << engine.status().message();
    sm::StartPlugin start;
    start.now = 1'700'000'000'000'000;
    ASSERT_TRUE((*engine)->Execute(start).ok());
    sm::ObserveKubeletRestart restart{start.now + 1,
                                      "x\n99  2026-01-01T00:00:00Z  Forged  line\r\x1b[2J"};
    ASSERT_TRUE((*engine)->Execute(restart).ok());
  }
  CliRun run = Cli("journal history --journal " + path.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("x\\n99"));
  EXPECT_EQ(run.output.find('\x1b'), std::string::npos);
  EXPECT_EQ(run.output.find('\r'), std::string::npos);
}

// Runs every reading verb on `journal` (with `prefix` before the binary, e.g. to drop root) and
// checks that each succeeds and that nothing appears beside the journal.
void ExpectVerbsReadItAndCreateNothing(const std::filesystem::path& journal,
                                       const std::string& prefix) {
  const auto dir = journal.parent_path();
  const auto count = [&] {
    return std::distance(std::filesystem::directory_iterator(dir),
                         std::filesystem::directory_iterator());
  };
  const auto before = count();
  for (const std::string verb : {"history", "export", "state", "verify"}) {
    const std::string command = "journal " + verb + " --journal " + journal.string();
    const std::string binary = std::string(GFP_BINARY);
    const std::string line =
        prefix.empty() ? binary + " " + command : prefix + " " + binary + " " + command;
    const CliRun run = RunProgram(line);
    EXPECT_EQ(run.exit_code, 0) << line << ":\n" << run.output;
  }
  EXPECT_EQ(count(), before) << "a reader created files beside " << journal;
}

// A journal in WAL mode, closed cleanly: no -wal, no -shm beside it.
void WriteCleanJournal(const std::filesystem::path& path) {
  auto engine = engine::Engine::Open(path);
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  sm::StartPlugin start;
  start.now = 1'700'000'000'000'000;
  ASSERT_TRUE((*engine)->Execute(start).ok());
}

// Item 7: the verbs work on a copy they may not write next to, and create nothing there. Root
// ignores permission bits, so as root the verbs run as `nobody` (setpriv, util-linux).
TEST_F(JournalCliTest, VerbsWorkInADirectoryTheyCannotWriteAndCreateNothing) {
  const auto copy = dir.path() / "ro";
  std::filesystem::create_directories(copy);
  WriteCleanJournal(copy / "journal.db");
  std::string prefix;
  if (::geteuid() == 0) {
    constexpr uid_t kNobody = 65534;
    ASSERT_EQ(::chown(copy.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown((copy / "journal.db").c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);  // nobody may pass through
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  ASSERT_EQ(::chmod((copy / "journal.db").c_str(), 0400), 0);
  ASSERT_EQ(::chmod(copy.c_str(), 0500), 0);
  ExpectVerbsReadItAndCreateNothing(copy / "journal.db", prefix);
  ::chmod(copy.c_str(), 0700);
}

// Item 7 on read-only media: a read-only bind mount (EROFS rather than EACCES). Needs root with
// mount permission; the test above covers the same behaviour without it.
TEST_F(JournalCliTest, VerbsWorkOnReadOnlyMediaAndCreateNothing) {
  const auto source = dir.path() / "ro-source";
  const auto mounted = dir.path() / "ro";
  std::filesystem::create_directories(source);
  std::filesystem::create_directories(mounted);
  WriteCleanJournal(source / "journal.db");
  const bool bound =
      ::geteuid() == 0 &&
      ::mount(source.c_str(), mounted.c_str(), nullptr, MS_BIND, nullptr) == 0 &&
      ::mount(nullptr, mounted.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  if (!bound) {
    ::umount2(mounted.c_str(), MNT_DETACH);
    GTEST_SKIP() << "needs root with mount permission (the test above covers read-only copies)";
  }
  ExpectVerbsReadItAndCreateNothing(mounted / "journal.db", "");
  ::umount2(mounted.c_str(), MNT_DETACH);
}

}  // namespace
}  // namespace gfp
