// SPEC §7 growth with history: `journal history --partition/--device/--since` answer through the
// journal's index exactly what a scan of every event answers, and `journal verify` checks the
// index (derived data, not hashed) against the events. A small journal: well under a second.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "common/sm_fixtures.h"
#include "common/temp_dir.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "store/journal.h"

namespace gfp {
namespace {

using ::testing::HasSubstr;

using gfp::testing::Cli;
using gfp::testing::CliRun;

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

class JournalIndexCliTest : public ::testing::Test {
 protected:
  // An H100 node, then 40 allocations of partitions chosen in turn, each released, written
  // through the store with the tags the engine gives.
  void SetUp() override {
    path = (dir.path() / "journal.db").string();
    const testing::NodeFixture node = testing::H100Node();
    testing::Driver driver;
    driver.Boot(node);
    for (std::size_t i = 0; i < 40; ++i) {
      const auto& [pid, modules] = node.partitions[(i * 7) % node.partitions.size()];
      std::vector<int> ms(modules.begin(), modules.end());
      const std::size_t before = driver.journal.size();
      driver.RunToCompletion(driver.Request(node.resource, testing::Modules(node, ms)));
      for (std::size_t k = before; k < driver.journal.size(); ++k) {
        if (driver.journal[k].has_allocation_granted()) {
          sm::ReleaseAllocation release;
          release.now = driver.now += 1000;
          release.allocation_id = driver.journal[k].allocation_granted().allocation_id();
          driver.RunToCompletion(release);
          break;
        }
      }
    }
    auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
    ASSERT_TRUE(journal.ok()) << journal.status().message();
    std::vector<store::NewEvent> batch;
    for (const auto& e : driver.journal) {
      batch.push_back(
          {e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e), sm::EventSubjects(e)});
    }
    ASSERT_TRUE((*journal)->Append(batch).ok());
    all = JsonLines(Cli("journal export --journal " + path).output);
    ASSERT_EQ(all.size(), driver.journal.size());
  }

  // Seqs of `history` with these filters.
  std::vector<std::uint64_t> History(const std::string& filters) {
    CliRun run = Cli("journal history --format json --journal " + path + " " + filters);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    std::vector<std::uint64_t> seqs;
    for (const auto& line : JsonLines(run.output)) seqs.push_back(line["seq"]);
    return seqs;
  }

  testing::TempDir dir;
  std::string path;
  std::vector<nlohmann::json> all;  // `export`: every event, decoded by a full scan
};

bool NamesPartition(const nlohmann::json& e, std::uint32_t pid) {
  if (e.contains("partition_id") && e["partition_id"] == pid) return true;
  if (!e.contains("partition_ids")) return false;
  for (const auto& id : e["partition_ids"]) {
    if (id == pid) return true;
  }
  return false;
}

TEST_F(JournalIndexCliTest, PartitionAndSinceAnswerLikeAScan) {
  for (std::uint32_t pid : {0U, 3U, 9U, 42U}) {
    for (std::size_t from : {std::size_t{0}, all.size() / 2, all.size() - 3}) {
      const std::string since = all[from]["time"];
      std::vector<std::uint64_t> expected;
      for (const auto& e : all) {
        if (e["time"].get<std::string>() >= since && NamesPartition(e, pid)) {
          expected.push_back(e["seq"]);
        }
      }
      SCOPED_TRACE("partition " + std::to_string(pid) + " since " + since);
      if (pid != 42 && from == 0) {
        EXPECT_FALSE(expected.empty());
      }
      EXPECT_EQ(History("--partition " + std::to_string(pid) + " --since " + since), expected);
    }
  }
}

TEST_F(JournalIndexCliTest, DeviceAnswersLikeAScan) {
  for (const std::string bdf : {"0000:c3:00.0", "0000:1b:00.0", "0000:00:00.0"}) {
    std::vector<std::uint64_t> expected;
    for (const auto& e : all) {
      if (e.dump().find("\"" + bdf + "\"") != std::string::npos) expected.push_back(e["seq"]);
    }
    SCOPED_TRACE(bdf);
    EXPECT_EQ(History("--device " + bdf), expected);
    std::vector<std::uint64_t> both;
    for (const auto& e : all) {
      if (e.dump().find("\"" + bdf + "\"") != std::string::npos && NamesPartition(e, 0)) {
        both.push_back(e["seq"]);
      }
    }
    EXPECT_EQ(History("--device " + bdf + " --partition 0"), both);
  }
}

// Failed before verify checked the index: a deleted index row passed as intact.
TEST_F(JournalIndexCliTest, VerifyReportsAnIndexRowThatDisagreesWithItsEvent) {
  ASSERT_EQ(Cli("journal verify --journal " + path).exit_code, 0);
  const std::vector<std::uint64_t> partition3 = History("--partition 3");
  ASSERT_GE(partition3.size(), 2U);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const std::string sql =
      "DELETE FROM event_subjects WHERE seq = " + std::to_string(partition3[1]) +
      " AND subject_id = (SELECT id FROM subjects WHERE tag = 'p:3')";
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  CliRun run = Cli("journal verify --journal " + path);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("damaged at seq " + std::to_string(partition3[1])));
  EXPECT_THAT(run.output, HasSubstr("the index of subject p:3 disagrees with the events"));
}

}  // namespace
}  // namespace gfp
