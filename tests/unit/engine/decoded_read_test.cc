// ForEachDecoded: a long read runs on a thread of its own, a batch ahead; it must still give
// every event once, in order, on the calling thread, and end the way a plain read would.
#include "engine/decoded_read.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "statemachine/event_codec.h"

namespace gfp::engine {
namespace {

// Long enough for several batches and a partial last one.
constexpr std::uint64_t kEvents = 3 * kReadAheadAtLeast + 517;

std::string BdfOf(std::uint64_t seq) { return "0000:" + std::to_string(seq) + ".0"; }

// Event seq i is a health change of device BdfOf(i) at time i; `garbage_at` gets a payload that
// does not decode.
void Fill(const std::filesystem::path& path, std::uint64_t count, std::uint64_t garbage_at = 0) {
  auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
  ASSERT_TRUE(journal.ok()) << journal.status().message();
  std::vector<store::NewEvent> batch;
  for (std::uint64_t seq = 1; seq <= count; ++seq) {
    events::Event e;
    e.set_time_unix_micros(static_cast<std::int64_t>(seq));
    e.mutable_device_health_changed()->set_bdf(BdfOf(seq));
    std::string payload = seq == garbage_at ? std::string("\xff\xff\xff", 3) : sm::EncodeEvent(e);
    batch.push_back({e.time_unix_micros(), sm::EventTypeName(e), std::move(payload), {}});
  }
  ASSERT_TRUE((*journal)->Append(batch).ok());
}

struct Seen {
  std::vector<std::uint64_t> seqs;
  std::vector<std::string> mismatches;  // events whose body is not the one written at their seq
};

Status Collect(Seen& seen, const store::StoredEvent& stored, const events::Event& event) {
  seen.seqs.push_back(stored.seq);
  if (event.device_health_changed().bdf() != BdfOf(stored.seq) ||
      event.time_unix_micros() != static_cast<std::int64_t>(stored.seq)) {
    seen.mismatches.push_back(std::to_string(stored.seq));
  }
  return Status::Ok();
}

std::vector<std::uint64_t> Range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = from; s <= to; ++s) out.push_back(s);
  return out;
}

class DecodedReadTest : public ::testing::Test {
 protected:
  std::filesystem::path path() const { return dir.path() / "journal.db"; }
  std::unique_ptr<store::Journal> Reader() {
    auto j = store::Journal::Open(path(), store::OpenMode::kReadOnly);
    EXPECT_TRUE(j.ok()) << j.status().message();
    return j.ok() ? std::move(j).value() : nullptr;
  }
  gfp::testing::TempDir dir;
};

TEST_F(DecodedReadTest, GivesEveryEventOnceInOrderWhetherReadAheadOrNot) {
  Fill(path(), kEvents);
  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  struct Case {
    std::uint64_t from, to;
    bool verified;
  };
  // Read ahead (long) and on the calling thread (short); to 0 = to the end.
  for (const Case& c : {Case{0, 0, false}, Case{3, kEvents - 2, true}, Case{7, 0, true},
                        Case{kEvents - 100, kEvents, false}, Case{5, 5, true}}) {
    SCOPED_TRACE("from " + std::to_string(c.from) + " to " + std::to_string(c.to) +
                 (c.verified ? " verified" : ""));
    Seen seen;
    Status s =
        ForEachDecoded(*reader, c.from, c.to, c.verified,
                       [&](const auto& stored, const auto& e) { return Collect(seen, stored, e); });
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(seen.seqs, Range(c.from == 0 ? 1 : c.from, c.to == 0 ? kEvents : c.to));
    EXPECT_TRUE(seen.mismatches.empty()) << "first: " << seen.mismatches.front();
  }
}

TEST_F(DecodedReadTest, TheCallbacksFirstErrorStopsTheReadAndIsReturned) {
  Fill(path(), kEvents);
  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  const std::uint64_t stop_at = kReadAheadAtLeast + 3;
  Seen seen;
  Status s = ForEachDecoded(*reader, 0, 0, false, [&](const auto& stored, const auto& e) {
    if (stored.seq == stop_at) return FailedPrecondition("stop at " + std::to_string(stop_at));
    return Collect(seen, stored, e);
  });
  EXPECT_EQ(s.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "stop at " + std::to_string(stop_at));
  EXPECT_EQ(seen.seqs, Range(1, stop_at - 1));
  // The reading thread is gone: the journal answers its owner again.
  std::uint64_t count = 0;
  Status again = reader->ForEach(1, 10, [&](const store::StoredEvent&) {
    ++count;
    return Status::Ok();
  });
  EXPECT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(count, 10U);
}

TEST_F(DecodedReadTest, AnEventThatDoesNotDecodeIsDataLossAfterTheEventsBeforeIt) {
  const std::uint64_t bad = 2 * kReadAheadAtLeast + 11;
  Fill(path(), kEvents, bad);
  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  Seen seen;
  Status s = ForEachDecoded(*reader, 0, 0, false, [&](const auto& stored, const auto& e) {
    return Collect(seen, stored, e);
  });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("journal seq " + std::to_string(bad)), std::string::npos)
      << s.message();
  EXPECT_EQ(seen.seqs, Range(1, bad - 1));
}

TEST_F(DecodedReadTest, AReadErrorComesAfterTheEventsBeforeIt) {
  Fill(path(), kEvents);
  const std::uint64_t bad = kEvents - 40;  // in the last, partial batch
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE events SET hash = zeroblob(32) WHERE seq = " + std::to_string(bad);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  Seen seen;
  Status s =
      ForEachDecoded(*reader, 0, 0, /*verified=*/true,
                     [&](const auto& stored, const auto& e) { return Collect(seen, stored, e); });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find(std::to_string(bad)), std::string::npos) << s.message();
  EXPECT_EQ(seen.seqs, Range(1, bad - 1));
}

}  // namespace
}  // namespace gfp::engine
