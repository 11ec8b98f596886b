// `journal verify`'s index check (cli::IndexCheck) against a journal that serve keeps writing:
// the rows of events appended after verify read its last event are not compared (CI caught
// verify reporting "an index row names event seq 12" of a journal it had read to seq 9), nor
// the rows below the first indexed seq it began with.
#include "cli/journal_index_check.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <vector>

#include "common/temp_dir.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "store/journal.h"

namespace gfp::cli {
namespace {

// An event naming partition `pid` (tags p:<pid>), at a time that differs per event.
events::Event Activated(std::uint32_t pid, std::int64_t time) {
  events::Event e;
  e.set_time_unix_micros(time);
  e.mutable_partition_activated()->set_partition_id(pid);
  e.mutable_partition_activated()->set_allocation_id("alloc-" + std::to_string(time));
  return e;
}

class JournalIndexCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::Journal::Open(dir.path() / "journal.db", store::OpenMode::kReadWrite);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    journal = std::move(opened).value();
  }

  void Append(const events::Event& e) {
    const std::vector<store::NewEvent> batch = {
        {e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e), sm::EventSubjects(e)}};
    ASSERT_TRUE(journal->Append(batch).ok());
    written.push_back(e);
  }

  // What verify does: add the events 1..n it read.
  IndexCheck ReadTo(std::uint64_t n) {
    IndexCheck check(*journal->SubjectsFrom());
    for (std::uint64_t seq = 1; seq <= n; ++seq) check.Add(seq, written[seq - 1]);
    return check;
  }

  testing::TempDir dir;
  std::unique_ptr<store::Journal> journal;
  std::vector<events::Event> written;
};

TEST_F(JournalIndexCheckTest, RowsOfEventsAppendedAfterTheReadAreNotCompared) {
  for (std::int64_t t = 1; t <= 9; ++t) Append(Activated(t % 3 == 0 ? 1 : 2, t));
  IndexCheck check = ReadTo(9);
  // serve goes on: more events of partition 1, and of a partition verify has not seen at all.
  Append(Activated(1, 10));
  Append(Activated(7, 11));
  Append(Activated(1, 12));
  std::uint64_t bad_seq = 0;
  auto problem = check.Compare(*journal, &bad_seq);
  ASSERT_TRUE(problem.ok()) << problem.status().message();
  EXPECT_EQ(*problem, "");
  EXPECT_EQ(bad_seq, 0u);
}

// serve's first start after an upgrade indexes a schema-1 journal's old events while verify
// runs: verify began when the index started at seq 6, and the rows of 1..5 appeared meanwhile.
TEST_F(JournalIndexCheckTest, RowsBelowTheFirstIndexedSeqAddedDuringTheReadAreNotCompared) {
  for (std::int64_t t = 1; t <= 9; ++t) Append(Activated(t % 2 == 0 ? 1 : 2, t));
  IndexCheck check(6);  // SubjectsFrom() when verify began
  for (std::uint64_t seq = 1; seq <= 9; ++seq) check.Add(seq, written[seq - 1]);
  std::uint64_t bad_seq = 0;
  auto problem = check.Compare(*journal, &bad_seq);
  ASSERT_TRUE(problem.ok()) << problem.status().message();
  EXPECT_EQ(*problem, "");
  EXPECT_EQ(bad_seq, 0u);
}

TEST_F(JournalIndexCheckTest, AMissingRowWithinTheReadIsStillFound) {
  for (std::int64_t t = 1; t <= 6; ++t) Append(Activated(1, t));
  IndexCheck check = ReadTo(6);
  Append(Activated(1, 7));  // a later row of the same tag does not stand in for it
  // Event 4's index row lost (the index is not hashed: only this check finds it).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() / "journal.db").c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DELETE FROM event_subjects WHERE seq = 4", nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  std::uint64_t bad_seq = 0;
  auto problem = check.Compare(*journal, &bad_seq);
  ASSERT_TRUE(problem.ok()) << problem.status().message();
  EXPECT_NE(problem->find("the index of subject p:1 disagrees with the events: event seq 4 names "
                          "it but has no index row"),
            std::string::npos)
      << *problem;
  EXPECT_EQ(bad_seq, 4u) << *problem;
}

}  // namespace
}  // namespace gfp::cli
