// `gpu-fabric-plugin journal …` as an operator runs it: the real binary on real journals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/temp_dir.h"

namespace gfp {
namespace {

using ::testing::HasSubstr;

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CliRun Cli(const std::string& args) {
  const std::string command = std::string(GFP_BINARY) + " " + args + " 2>&1";
  CliRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) run.output += buffer.data();
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

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

}  // namespace
}  // namespace gfp
