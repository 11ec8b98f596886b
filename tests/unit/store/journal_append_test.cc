// Appending and reading back: round trips, batches, ranges, the documented hash formula, and a
// failed append (simulated full disk) that leaves the journal consistent.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "journal_test_util.h"

namespace gfp::store {
namespace {

using testing::MakeEvent;
using testing::MakeEvents;
using testing::OpenOrDie;
using testing::ReadAll;
using testing::TempDir;

class JournalAppendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = OpenOrDie(dir_ / "journal.db", OpenMode::kReadWrite);
    ASSERT_NE(journal_, nullptr);
  }
  TempDir dir_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(JournalAppendTest, RoundTripKeepsEveryFieldByteForByte) {
  NewEvent ev;
  ev.time_unix_micros = -1234567890123LL;
  ev.type = "DeviceHealthChanged";
  for (int b = 0; b < 256; ++b) ev.payload.push_back(static_cast<char>(b));
  NewEvent empty_payload{42, "PluginStarted", ""};
  const std::vector<NewEvent> batch = {ev, empty_payload};
  auto first = journal_->Append(batch);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(*first, 1U);

  const auto events = ReadAll(*journal_);
  ASSERT_EQ(events.size(), 2U);
  EXPECT_EQ(events[0].seq, 1U);
  EXPECT_EQ(events[0].time_unix_micros, ev.time_unix_micros);
  EXPECT_EQ(events[0].type, ev.type);
  EXPECT_EQ(events[0].payload, ev.payload);
  EXPECT_EQ(events[1].seq, 2U);
  EXPECT_EQ(events[1].payload, "");
  EXPECT_EQ(events[1].type, "PluginStarted");
  EXPECT_NE(events[0].hash, events[1].hash);
}

TEST_F(JournalAppendTest, BatchesReturnTheirFirstSeqAndSeqsAreContiguous) {
  std::uint64_t expected_first = 1;
  for (std::uint64_t size : {1U, 5U, 1U, 100U, 3U}) {
    auto first = journal_->Append(MakeEvents(expected_first, size));
    ASSERT_TRUE(first.ok()) << "batch of " << size << ": " << first.status().message();
    EXPECT_EQ(*first, expected_first) << "batch of " << size;
    expected_first += size;
    EXPECT_EQ(journal_->LastSeq(), expected_first - 1);
  }
  const auto events = ReadAll(*journal_);
  ASSERT_EQ(events.size(), expected_first - 1);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, i + 1);
    EXPECT_EQ(events[i].payload, MakeEvent(i + 1).payload) << "seq " << i + 1;
  }
}

TEST_F(JournalAppendTest, EmptyBatchAndEmptyTypeAreRejectedAndAppendNothing) {
  auto none = journal_->Append({});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), ErrorCode::kInvalidArgument);

  std::vector<NewEvent> batch = MakeEvents(1, 3);
  batch[2].type.clear();
  auto bad = journal_->Append(batch);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("event 2"), std::string::npos) << bad.status().message();
  EXPECT_EQ(journal_->LastSeq(), 0U);
  EXPECT_TRUE(ReadAll(*journal_).empty());
}

TEST_F(JournalAppendTest, ForEachHonoursRangesAndStopsOnCallbackError) {
  ASSERT_TRUE(journal_->Append(MakeEvents(1, 10)).ok());
  const auto seqs = [&](std::uint64_t from, std::uint64_t to) {
    std::vector<std::uint64_t> out;
    const Status s = journal_->ForEach(from, to, [&](const StoredEvent& ev) {
      out.push_back(ev.seq);
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << "ForEach(" << from << ", " << to << "): " << s.message();
    return out;
  };
  EXPECT_EQ(seqs(3, 5), (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(seqs(9, 0), (std::vector<std::uint64_t>{9, 10}));
  EXPECT_EQ(seqs(0, 2), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(seqs(7, 7), (std::vector<std::uint64_t>{7}));
  EXPECT_TRUE(seqs(11, 0).empty());
  EXPECT_EQ(seqs(1, 1000).size(), 10U);

  EXPECT_EQ(journal_->ForEach(5, 4, [](const StoredEvent&) { return Status::Ok(); }).code(),
            ErrorCode::kInvalidArgument);

  int calls = 0;
  const Status stopped = journal_->ForEach(1, 0, [&](const StoredEvent& ev) {
    ++calls;
    return ev.seq == 4 ? InvalidArgument("cannot decode seq 4") : Status::Ok();
  });
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(stopped.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(stopped.message(), "cannot decode seq 4");
  // The scan statement is reusable after an early stop.
  EXPECT_EQ(seqs(1, 0).size(), 10U);
}

TEST_F(JournalAppendTest, CallingBackIntoTheJournalFromACallbackFailsInsteadOfDeadlocking) {
  ASSERT_TRUE(journal_->Append(MakeEvents(1, 2)).ok());
  Status inner;
  const Status outer = journal_->ForEach(1, 0, [&](const StoredEvent&) {
    EXPECT_EQ(journal_->LastSeq(), 2U);  // lock-free accessors are fine
    inner = journal_->Append(MakeEvents(3, 1)).status();
    return inner;
  });
  EXPECT_EQ(inner.code(), ErrorCode::kFailedPrecondition) << testing::Describe(inner);
  EXPECT_EQ(outer.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(journal_->LastSeq(), 2U);
}

TEST_F(JournalAppendTest, ConcurrentAppendersGetDisjointContiguousSeqs) {
  constexpr int kThreads = 4;
  constexpr int kAppendsPerThread = 8;
  std::vector<std::vector<std::uint64_t>> firsts(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        auto seq = journal_->Append(MakeEvents(static_cast<std::uint64_t>(t * 100 + i), 2));
        if (seq.ok()) firsts[static_cast<std::size_t>(t)].push_back(*seq);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<std::uint64_t> all;
  for (const auto& f : firsts) all.insert(all.end(), f.begin(), f.end());
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kThreads * kAppendsPerThread));
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], 1 + 2 * i) << "batch " << i;
  const VerifyReport report = journal_->Verify({});
  EXPECT_TRUE(report.ok) << testing::Describe(report);
  EXPECT_EQ(report.events_checked, static_cast<std::uint64_t>(kThreads * kAppendsPerThread * 2));
}

// An independent implementation of the formula in docs/journal-format.md.
Hash DocumentedEventHash(const Hash& prev, std::uint64_t seq, std::int64_t time,
                         const std::string& type, const std::string& payload) {
  std::string buf(reinterpret_cast<const char*>(prev.data()), prev.size());
  for (int i = 7; i >= 0; --i) buf.push_back(static_cast<char>((seq >> (8 * i)) & 0xff));
  const auto t = static_cast<std::uint64_t>(time);
  for (int i = 7; i >= 0; --i) buf.push_back(static_cast<char>((t >> (8 * i)) & 0xff));
  const auto n = static_cast<std::uint32_t>(type.size());
  for (int i = 3; i >= 0; --i) buf.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  buf += type;
  buf += payload;
  Hash out{};
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(buf.data(), buf.size(), out.data(), &len, EVP_sha256(), nullptr), 1);
  return out;
}

TEST_F(JournalAppendTest, StoredHashesFollowTheDocumentedFormula) {
  ASSERT_TRUE(journal_->Append(MakeEvents(1, 9)).ok());
  Hash prev{};
  for (const StoredEvent& ev : ReadAll(*journal_)) {
    const Hash expected =
        DocumentedEventHash(prev, ev.seq, ev.time_unix_micros, ev.type, ev.payload);
    EXPECT_EQ(ev.hash, expected) << "seq " << ev.seq << " (time " << ev.time_unix_micros << ")";
    prev = ev.hash;
  }
}

TEST_F(JournalAppendTest, FullDiskFailsTheAppendAndLeavesTheJournalConsistent) {
  ASSERT_TRUE(journal_->Append(MakeEvents(1, 5)).ok());
  const auto before = ReadAll(*journal_);
  // max_page_count cannot go below the current size, so 1 means "no room to grow".
  ASSERT_TRUE(journal_->SetMaxPageCountForTesting(1).ok());

  // A batch whose first events may fit in free space but whose whole cannot.
  std::vector<NewEvent> big = MakeEvents(6, 50);
  for (auto& ev : big) ev.payload.append(16 * 1024, 'x');
  auto failed = journal_->Append(big);
  ASSERT_FALSE(failed.ok()) << "append succeeded although the database could not grow";
  EXPECT_EQ(failed.status().code(), ErrorCode::kResourceExhausted)
      << testing::Describe(failed.status());
  EXPECT_NE(failed.status().message().find(journal_->path().string()), std::string::npos);
  EXPECT_EQ(journal_->LastSeq(), 5U) << "in-memory tail moved on a failed append";

  const auto after = ReadAll(*journal_);
  ASSERT_EQ(after.size(), before.size()) << "part of the failed batch is visible";
  const VerifyReport report = journal_->Verify({});
  EXPECT_TRUE(report.ok) << testing::Describe(report);

  ASSERT_TRUE(journal_->SetMaxPageCountForTesting(1'073'741'823).ok());
  auto retry = journal_->Append(big);
  ASSERT_TRUE(retry.ok()) << retry.status().message();
  EXPECT_EQ(*retry, 6U);

  // And the result survives a reopen with a clean chain.
  const auto path = journal_->path();
  journal_.reset();
  auto reopened = OpenOrDie(path, OpenMode::kReadWrite);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->LastSeq(), 55U);
  const VerifyReport final_report = reopened->Verify({});
  EXPECT_TRUE(final_report.ok) << testing::Describe(final_report);
}

TEST_F(JournalAppendTest, FullDiskOnASingleEventIsAlsoReported) {
  ASSERT_TRUE(journal_->SetMaxPageCountForTesting(1).ok());
  NewEvent big{1, "InventoryObserved", std::string(64 * 1024, 'y')};
  auto failed = journal_->Append({&big, 1});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(journal_->LastSeq(), 0U);
  ASSERT_TRUE(journal_->SetMaxPageCountForTesting(1'073'741'823).ok());
  auto ok = journal_->Append({&big, 1});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(*ok, 1U);
}

}  // namespace
}  // namespace gfp::store
