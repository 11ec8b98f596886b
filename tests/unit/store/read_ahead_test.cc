// store::ReadAhead hands a read's events to its consumer a batch at a time; every field of every
// event must arrive as read, whatever the sizes of its strings, and in order.
#include "store/read_ahead.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gfp::store {
namespace {

// Several batches of 1,024 and a partial last one.
constexpr std::uint64_t kEvents = 5 * 1024 + 77;

// Each field a function of seq alone, so the consumer's side is computed without the reader's.
// Sizes vary from empty to longer than one page, so events straddle whatever a batch stores.
std::string TypeOf(std::uint64_t seq) {
  return std::string(seq % 23, static_cast<char>('A' + seq % 26));
}
std::string PayloadOf(std::uint64_t seq) {
  std::string p(seq % 97 == 0 ? 5000 : seq % 41, '\0');
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<char>((seq * 31 + i) % 251);
  return p;
}
Hash HashOf(std::uint64_t seq) {
  Hash h{};
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<std::uint8_t>(seq >> (i % 8) ^ i);
  return h;
}
std::int64_t TimeOf(std::uint64_t seq) {
  return 1'700'000'000'000'000 + static_cast<std::int64_t>(seq) * 7;
}

// A read of seqs 1..count; fails after `fail_after` events when that is not 0.
EventRead ReadOf(std::uint64_t count, std::uint64_t fail_after = 0) {
  return [=](const EventSink& sink) -> Status {
    for (std::uint64_t seq = 1; seq <= count; ++seq) {
      if (fail_after != 0 && seq > fail_after)
        return DataLoss("damaged at seq " + std::to_string(seq));
      StoredEvent e{seq, TimeOf(seq), TypeOf(seq), PayloadOf(seq), HashOf(seq)};
      GFP_RETURN_IF_ERROR(sink(e));
    }
    return Status::Ok();
  };
}

// The seqs of the events that arrived whole; the first event that did not, if any.
struct Received {
  std::vector<std::uint64_t> seqs;
  std::string first_wrong;
};

EventSink Check(Received& r) {
  return [&r](const StoredEvent& e) -> Status {
    r.seqs.push_back(e.seq);
    const bool whole = e.time_unix_micros == TimeOf(e.seq) && e.type == TypeOf(e.seq) &&
                       e.payload == PayloadOf(e.seq) && e.hash == HashOf(e.seq);
    if (!whole && r.first_wrong.empty()) r.first_wrong = "seq " + std::to_string(e.seq);
    return Status::Ok();
  };
}

TEST(ReadAheadTest, EveryFieldOfEveryEventArrivesInOrder) {
  Received r;
  ASSERT_TRUE(ReadAhead(ReadOf(kEvents), Check(r)).ok());
  EXPECT_EQ(r.first_wrong, "") << "an event arrived changed";
  ASSERT_EQ(r.seqs.size(), kEvents);
  for (std::uint64_t i = 0; i < kEvents; ++i) ASSERT_EQ(r.seqs[i], i + 1) << "out of order";
}

TEST(ReadAheadTest, TheReadsErrorComesAfterEveryEventBeforeIt) {
  Received r;
  const Status s = ReadAhead(ReadOf(kEvents, 3000), Check(r));
  EXPECT_EQ(s.message(), "damaged at seq 3001");
  EXPECT_EQ(r.seqs.size(), 3000u);
  EXPECT_EQ(r.first_wrong, "");
}

TEST(ReadAheadTest, TheConsumersErrorStopsTheReadAndIsReturned) {
  std::uint64_t calls = 0;
  const Status s = ReadAhead(ReadOf(kEvents), [&](const StoredEvent& e) -> Status {
    ++calls;
    return e.seq == 1500 ? Internal("printing failed") : Status::Ok();
  });
  EXPECT_EQ(s.message(), "printing failed");
  EXPECT_EQ(calls, 1500u);
}

}  // namespace
}  // namespace gfp::store
