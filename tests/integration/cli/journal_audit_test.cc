// Audit shipping from the `journal` verbs (SPEC §2.2), on the real binary: `verify` ends with the
// chain head and checks an anchor recorded earlier; `export --follow` streams new events.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "common/temp_dir.h"
#include "integration/cli/verify_head.h"
#include "process/child_process.h"
#include "statemachine/event_codec.h"
#include "store/hash_chain.h"
#include "store/journal.h"

namespace gfp {
namespace {

using gfp::testing::HeadAnchor;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

process::ProcessOptions Binary(std::vector<std::string> args, std::filesystem::path log) {
  process::ProcessOptions options;
  options.binary = GFP_BINARY;
  options.args = std::move(args);
  options.log_path = std::move(log);
  return options;
}

process::CommandResult RunBinary(const std::vector<std::string>& args,
                                 const std::filesystem::path& log) {
  auto result = process::RunCommand(Binary(args, log));
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : process::CommandResult{};
}

// The real tool a forger would need: rewrites one event's payload, then re-chains every later
// event and every snapshot with the store's own hashing, so the journal is self-consistent.
void ForgeAndRechain(const std::string& path, std::uint64_t seq, const std::string& from,
                     const std::string& to) {
  ASSERT_EQ(from.size(), to.size());  // same length keeps the protobuf valid
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  auto hasher = store::ChainHasher::Create();
  ASSERT_TRUE(hasher.ok());
  std::map<std::uint64_t, store::Hash> new_hash;
  store::Hash prev = store::kZeroHash;
  sqlite3_stmt* read = nullptr;
  sqlite3_prepare_v2(db, "SELECT seq, time_us, type, payload FROM events ORDER BY seq", -1, &read,
                     nullptr);
  std::vector<std::tuple<std::uint64_t, std::int64_t, std::string, std::string>> rows;
  while (sqlite3_step(read) == SQLITE_ROW) {
    rows.emplace_back(sqlite3_column_int64(read, 0), sqlite3_column_int64(read, 1),
                      reinterpret_cast<const char*>(sqlite3_column_text(read, 2)),
                      std::string(static_cast<const char*>(sqlite3_column_blob(read, 3)),
                                  sqlite3_column_bytes(read, 3)));
  }
  sqlite3_finalize(read);
  sqlite3_stmt* write = nullptr;
  sqlite3_prepare_v2(db, "UPDATE events SET payload = ?, hash = ? WHERE seq = ?", -1, &write,
                     nullptr);
  for (auto& [s, time, type, payload] : rows) {
    if (s == seq) {
      const auto at = payload.find(from);
      ASSERT_NE(at, std::string::npos) << "seq " << seq << " has no " << from;
      payload.replace(at, from.size(), to);
    }
    auto hash = hasher->EventHash(prev, s, time, type, payload);
    ASSERT_TRUE(hash.ok());
    prev = new_hash[s] = *hash;
    sqlite3_bind_blob(write, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
    sqlite3_bind_blob(write, 2, prev.data(), 32, SQLITE_STATIC);
    sqlite3_bind_int64(write, 3, static_cast<std::int64_t>(s));
    ASSERT_EQ(sqlite3_step(write), SQLITE_DONE);
    sqlite3_reset(write);
  }
  sqlite3_finalize(write);
  sqlite3_prepare_v2(db, "SELECT seq, created_time_us, payload FROM snapshots", -1, &read, nullptr);
  std::vector<std::tuple<std::uint64_t, std::int64_t, std::string>> snapshots;
  while (sqlite3_step(read) == SQLITE_ROW) {
    snapshots.emplace_back(sqlite3_column_int64(read, 0), sqlite3_column_int64(read, 1),
                           std::string(static_cast<const char*>(sqlite3_column_blob(read, 2)),
                                       sqlite3_column_bytes(read, 2)));
  }
  sqlite3_finalize(read);
  sqlite3_prepare_v2(db, "UPDATE snapshots SET hash = ? WHERE seq = ?", -1, &write, nullptr);
  for (const auto& [s, created, payload] : snapshots) {
    auto hash = hasher->SnapshotHash(s, new_hash[s], created, payload);
    ASSERT_TRUE(hash.ok());
    sqlite3_bind_blob(write, 1, hash->data(), 32, SQLITE_TRANSIENT);
    sqlite3_bind_int64(write, 2, static_cast<std::int64_t>(s));
    ASSERT_EQ(sqlite3_step(write), SQLITE_DONE);
    sqlite3_reset(write);
  }
  sqlite3_finalize(write);
  sqlite3_close(db);
}

void AppendKubeletRestarts(const std::string& path, int count, int first_number) {
  auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  std::vector<store::NewEvent> batch;
  for (int i = 0; i < count; ++i) {
    events::Event e;
    e.set_time_unix_micros(1'900'000'000'000'000 + first_number + i);
    e.mutable_kubelet_restart_observed()->set_reason("restart " + std::to_string(first_number + i));
    batch.push_back({e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e)});
  }
  ASSERT_TRUE((*journal)->Append(batch).ok());
}

class JournalAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal = (dir.path() / "journal.db").string();
    std::filesystem::copy_file(
        std::filesystem::path(GFP_SOURCE_DIR) / "tests/fixtures/journal-v1-demo-day.db", journal);
  }
  process::CommandResult Verify(const std::string& anchor = "") {
    std::vector<std::string> args = {"journal", "verify", "--journal", journal};
    if (!anchor.empty()) args.insert(args.end(), {"--anchor", anchor});
    return RunBinary(args, dir.path() / ("verify-" + std::to_string(++runs) + ".log"));
  }
  void Sql(const std::string& statement) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  testing::TempDir dir;
  std::string journal;
  int runs = 0;
};

TEST_F(JournalAuditTest, VerifyEndsWithTheChainHead) {
  auto run = Verify();
  EXPECT_EQ(run.status.ShellCode(), 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("is intact: 43 events"));
  EXPECT_EQ(HeadAnchor(run.output).substr(0, 3), "43:");
}

TEST_F(JournalAuditTest, AHeadPrintedEarlierIsAcceptedAfterMoreEvents) {
  const std::string anchor = HeadAnchor(Verify().output);
  AppendKubeletRestarts(journal, 3, 1);
  auto run = Verify(anchor);
  EXPECT_EQ(run.status.ShellCode(), 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("anchor seq 43 matches"));
  EXPECT_EQ(HeadAnchor(run.output).substr(0, 3), "46:");
}

TEST_F(JournalAuditTest, ARechainedHistoryPassesVerifyButNotTheAnchor) {
  const std::string anchor = HeadAnchor(Verify().output);
  ForgeAndRechain(journal, 42, "alloc-4 released", "alloc-9 released");
  auto plain = Verify();
  EXPECT_EQ(plain.status.ShellCode(), 0) << plain.output;  // the forgery is self-consistent
  const std::string forged_head = HeadAnchor(plain.output);
  EXPECT_NE(forged_head, anchor);
  auto run = Verify(anchor);
  EXPECT_EQ(run.status.ShellCode(), 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("anchor check failed: event seq 43 has chain hash " +
                        forged_head.substr(3) + " but the anchor recorded " + anchor.substr(3)));
}

TEST_F(JournalAuditTest, ATruncatedJournalFailsTheAnchor) {
  const std::string anchor = HeadAnchor(Verify().output);
  Sql("DELETE FROM events WHERE seq > 40; DELETE FROM snapshots WHERE seq > 40;");
  EXPECT_EQ(Verify().status.ShellCode(), 0);  // a truncated chain is still a chain
  auto run = Verify(anchor);
  EXPECT_EQ(run.status.ShellCode(), 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("anchor check failed: event seq 43 no longer exists (the "
                                    "journal ends at seq 40"));
}

TEST_F(JournalAuditTest, AMalformedAnchorIsAUsageError) {
  const std::string hex(64, 'a');
  for (const std::string& bad : {std::string("43"), "43:" + hex.substr(1), "x:" + hex, "-1:" + hex,
                                 ":" + hex, "43:" + hex + "0", "43:" + hex.substr(1) + "g"}) {
    auto run = Verify(bad);
    EXPECT_EQ(run.status.ShellCode(), 105) << bad << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("must be SEQ:HASH")) << bad;
  }
  // Seq 0 with the zero hash matched every journal (issue 21).
  auto zero = Verify("0:" + std::string(64, '0'));
  EXPECT_EQ(zero.status.ShellCode(), 105) << zero.output;
  EXPECT_THAT(zero.output, HasSubstr("names seq 0, the start of every chain"));
}

// The seqs of the JSON lines in `log`; fails on a line that is not an export object.
std::vector<std::uint64_t> ExportedSeqs(const std::string& log) {
  std::vector<std::uint64_t> seqs;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("seq")) {
      ADD_FAILURE() << "not an export line: " << line;
      continue;
    }
    seqs.push_back(j["seq"].get<std::uint64_t>());
  }
  return seqs;
}

std::vector<std::uint64_t> OneTo(std::uint64_t n) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

class FollowTest : public JournalAuditTest {
 protected:
  void StartFollow() {
    auto child = process::ChildProcess::Start(
        Binary({"journal", "export", "--follow", "--journal", journal}, dir.path() / "follow.log"));
    ASSERT_TRUE(child.ok()) << child.status().message();
    follow = std::move(*child);
  }
  bool WaitForSeq(std::uint64_t seq) {
    return follow->WaitForLog("\"seq\":" + std::to_string(seq) + ",", 10s);
  }
  std::unique_ptr<process::ChildProcess> follow;
};

TEST_F(FollowTest, PrintsNewEventsInOrderUntilSigterm) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  AppendKubeletRestarts(journal, 2, 1);
  ASSERT_TRUE(WaitForSeq(45)) << follow->Log();
  AppendKubeletRestarts(journal, 1, 3);
  AppendKubeletRestarts(journal, 4, 4);
  ASSERT_TRUE(WaitForSeq(50)) << follow->Log();
  const auto exit = follow->Terminate(5s);
  EXPECT_TRUE(exit.success()) << exit.ToString() << "\n" << follow->Log();
  EXPECT_EQ(ExportedSeqs(follow->Log()), OneTo(50));
  EXPECT_THAT(follow->Log(), HasSubstr("\"reason\":\"restart 7\""));
}

// More events than one read transaction prints (1000): the batches join without gaps or
// duplicates.
TEST_F(FollowTest, ManyEventsComeThroughInBatchesWithoutGapsOrDuplicates) {
  AppendKubeletRestarts(journal, 2200, 1);
  StartFollow();
  ASSERT_TRUE(WaitForSeq(2243)) << follow->Log().substr(0, 2000);
  AppendKubeletRestarts(journal, 1500, 3000);
  ASSERT_TRUE(WaitForSeq(3743));
  const auto exit = follow->Terminate(5s);
  EXPECT_TRUE(exit.success()) << exit.ToString();
  EXPECT_EQ(ExportedSeqs(follow->Log()), OneTo(3743));
}

TEST_F(FollowTest, ARewrittenEventEndsItWithExit1) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  ForgeAndRechain(journal, 42, "alloc-4 released", "alloc-9 released");
  AppendKubeletRestarts(journal, 1, 1);
  auto exit = follow->WaitForExit(10s);
  ASSERT_TRUE(exit) << follow->Log();
  EXPECT_EQ(exit->ShellCode(), 1);
  EXPECT_THAT(follow->Log(),
              HasSubstr("error: journal event seq 43 changed while it was followed"));
}

TEST_F(FollowTest, SigintStopsItWithExit0) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  const auto exit = follow->Terminate(5s, SIGINT);
  EXPECT_TRUE(exit.success()) << exit.ToString() << "\n" << follow->Log();
  EXPECT_EQ(ExportedSeqs(follow->Log()), OneTo(43));
}

TEST_F(FollowTest, ATruncatedJournalEndsItWithExit1) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  Sql("DELETE FROM events WHERE seq = 43; DELETE FROM snapshots WHERE seq = 43;");
  auto exit = follow->WaitForExit(10s);
  ASSERT_TRUE(exit) << follow->Log();
  EXPECT_EQ(exit->ShellCode(), 1);
  EXPECT_THAT(follow->Log(), HasSubstr("error: journal event seq 43 disappeared while it was "
                                       "followed (the journal was truncated or replaced)"));
}

// Issue 21, bug 4: a follower of a deleted or replaced journal read the old file on, silently.
TEST_F(FollowTest, ADeletedJournalEndsItWithExit1) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ignored;
    std::filesystem::remove(journal + suffix, ignored);
  }
  auto exit = follow->WaitForExit(10s);
  ASSERT_TRUE(exit) << follow->Log();
  EXPECT_EQ(exit->ShellCode(), 1);
  EXPECT_THAT(follow->Log(), HasSubstr("error: journal " + journal + " was deleted"));
}

TEST_F(FollowTest, AReplacedJournalEndsItWithExit1) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  std::filesystem::copy_file(journal, dir.path() / "copy.db");
  std::filesystem::rename(dir.path() / "copy.db", journal);
  auto exit = follow->WaitForExit(10s);
  ASSERT_TRUE(exit) << follow->Log();
  EXPECT_EQ(exit->ShellCode(), 1);
  EXPECT_THAT(follow->Log(), HasSubstr("was replaced by another file"));
}

// A reader that closed the pipe (`| head -n1`): the next write fails with EPIPE, reported with
// exit 1 and a message, instead of a silent death by SIGPIPE or a follower that never ends.
TEST_F(FollowTest, AClosedPipeEndsItWithExit1AndAMessage) {
  process::ProcessOptions options;
  options.binary = "/bin/bash";
  options.args = {"-c",
                  "\"$0\" journal export --follow --journal \"$1\" | head -n1 >/dev/null; "
                  "echo \"follow exit ${PIPESTATUS[0]}\"",
                  GFP_BINARY, journal};
  options.log_path = dir.path() / "pipe.log";
  auto child = process::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status().message();
  int appended = 0;
  // New events make it write again after head has gone.
  const bool ended = process::WaitUntil(
      [&] {
        if (!(*child)->Running()) return true;
        AppendKubeletRestarts(journal, 1, ++appended);
        return false;
      },
      10s, 300ms);
  ASSERT_TRUE(ended) << (*child)->Log();
  EXPECT_THAT((*child)->Log(), HasSubstr("follow exit 1"));
  EXPECT_THAT((*child)->Log(), HasSubstr("error: writing the output failed: Broken pipe"));
}

// A reader that kept its read transaction open between polls would stop the writer's
// checkpoints from emptying the -wal; this one does not. The writer stays open (closing it would
// checkpoint) so the -wal holds the new events while the follower reads them.
TEST_F(FollowTest, DoesNotHoldBackTheWritersCheckpoint) {
  StartFollow();
  ASSERT_TRUE(WaitForSeq(43)) << follow->Log();
  auto writer = store::Journal::Open(journal, store::OpenMode::kReadWrite);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  std::vector<store::NewEvent> batch;
  for (int i = 1; i <= 20; ++i) {
    events::Event e;
    e.set_time_unix_micros(1'900'000'000'000'000 + i);
    e.mutable_kubelet_restart_observed()->set_reason("restart " + std::to_string(i));
    batch.push_back({e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e)});
  }
  ASSERT_TRUE((*writer)->Append(batch).ok());
  ASSERT_TRUE(WaitForSeq(63)) << follow->Log();
  ASSERT_GT(std::filesystem::file_size(journal + "-wal"), 0u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 3000);
  // Reading the schema makes the connection see WAL mode (else the checkpoint is a no-op).
  ASSERT_EQ(sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr),
            SQLITE_OK);
  // TRUNCATE waits for readers still using the -wal (up to the busy timeout), then empties it.
  int wal_frames = -1;
  int checkpointed = -1;
  const int rc = sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &wal_frames,
                                           &checkpointed);
  sqlite3_close(db);
  EXPECT_EQ(rc, SQLITE_OK) << sqlite3_errstr(rc);
  EXPECT_EQ(wal_frames, 0);  // after TRUNCATE: the -wal is empty
  EXPECT_EQ(std::filesystem::file_size(journal + "-wal"), 0u);
  ASSERT_TRUE((*writer)->Append(std::span(batch).first(1)).ok());
  EXPECT_TRUE(WaitForSeq(64)) << follow->Log();
  EXPECT_TRUE(follow->Terminate(5s).success());
}

}  // namespace
}  // namespace gfp
