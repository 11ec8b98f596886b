// Property: flipping any single byte of any stored event or snapshot (any column, including
// seq) is detected by Verify. rapidcheck prints the failing case (and its seed) on failure.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "journal_test_util.h"

namespace gfp::store {
namespace {

using testing::MakeEvents;
using testing::OpenOrDie;
using testing::RawDb;
using testing::TempDir;

struct Flip {
  bool snapshot;       // which table
  std::size_t row;     // index into the rows of that table
  std::size_t column;  // index into the columns below
  std::size_t byte;    // byte position (modulo the value's length)
  std::uint8_t mask;   // non-zero XOR mask
};

const std::vector<std::string> kEventColumns = {"seq", "time_us", "type", "payload", "hash"};
const std::vector<std::string> kSnapshotColumns = {"seq", "created_time_us", "payload", "hash"};

RC_GTEST_PROP(JournalPropertyTest, AnySingleByteFlipIsDetectedByVerify, ()) {
  const auto event_count = *rc::gen::inRange<std::uint64_t>(1, 12);
  std::vector<NewEvent> events;
  for (std::uint64_t i = 0; i < event_count; ++i) {
    NewEvent ev;
    ev.time_unix_micros = *rc::gen::arbitrary<std::int64_t>();
    ev.type = *rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::inRange('A', 'z')));
    ev.payload = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
    events.push_back(std::move(ev));
  }
  // Up to three snapshots at distinct seqs: each one is a durable commit, and three cover
  // newest/middle/oldest.
  std::vector<std::uint64_t> candidates;
  for (std::uint64_t seq = 1; seq <= event_count; ++seq) candidates.push_back(seq);
  const auto snapshot_count =
      *rc::gen::inRange<std::size_t>(0, std::min<std::size_t>(3, candidates.size()) + 1);
  std::vector<std::uint64_t> snapshot_seqs;
  for (std::size_t k = 0; k < snapshot_count; ++k) {
    const auto pick = *rc::gen::inRange<std::size_t>(0, candidates.size());
    snapshot_seqs.push_back(candidates[pick]);
    candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
  }
  const auto snapshot_payload = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());

  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto writer = OpenOrDie(path, OpenMode::kReadWrite);
    RC_ASSERT(writer != nullptr);
    RC_ASSERT(writer->Append(events).ok());
    for (std::uint64_t seq : snapshot_seqs)
      RC_ASSERT(writer->SaveSnapshot(seq, snapshot_payload).ok());
    RC_ASSERT(writer->Verify({}).ok);
  }

  const bool snapshot = !snapshot_seqs.empty() && *rc::gen::arbitrary<bool>();
  const auto& columns = snapshot ? kSnapshotColumns : kEventColumns;
  const std::string table = snapshot ? "snapshots" : "events";
  const std::uint64_t seq =
      snapshot ? snapshot_seqs[*rc::gen::inRange<std::size_t>(0, snapshot_seqs.size())]
               : *rc::gen::inRange<std::uint64_t>(1, event_count + 1);
  const std::string column = columns[*rc::gen::inRange<std::size_t>(0, columns.size())];
  const auto mask = *rc::gen::inRange<int>(1, 256);
  const auto s = static_cast<std::int64_t>(seq);
  RC_LOG() << "flip " << table << "." << column << " at seq " << seq << " with mask " << mask
           << std::endl;

  {
    RawDb raw(path);
    int rc = SQLITE_ERROR;
    if (column == "seq" || column == "time_us" || column == "created_time_us") {
      const std::int64_t value =
          raw.QueryInt("SELECT " + column + " FROM " + table + " WHERE seq = " + std::to_string(s));
      const auto byte = *rc::gen::inRange<int>(0, 8);
      const auto flipped = static_cast<std::int64_t>(
          static_cast<std::uint64_t>(value) ^ (static_cast<std::uint64_t>(mask) << (8 * byte)));
      RC_LOG() << " byte " << byte << ": " << value << " -> " << flipped << std::endl;
      if (column == "seq") {
        // Moving a row onto an existing seq is refused by the primary key: not a single flip.
        RC_PRE(raw.QueryInt("SELECT count(*) FROM " + table +
                            " WHERE seq = " + std::to_string(flipped)) == 0);
      }
      rc = raw.WriteInt(table, column, s, flipped);
    } else {
      std::string bytes = raw.ReadBytes(table, column, s);
      RC_PRE(!bytes.empty());  // nothing to flip in an empty payload
      const auto pos = *rc::gen::inRange<std::size_t>(0, bytes.size());
      bytes[pos] = static_cast<char>(static_cast<unsigned char>(bytes[pos]) ^ mask);
      RC_LOG() << " byte " << pos << std::endl;
      rc = column == "type" ? raw.WriteText(table, column, s, bytes)
                            : raw.WriteBlob(table, column, s, bytes);
    }
    RC_ASSERT(rc == SQLITE_OK);
  }

  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  RC_ASSERT(reader != nullptr);
  const VerifyReport report = reader->Verify({});
  RC_LOG() << testing::Describe(report) << std::endl;
  RC_ASSERT(!report.ok);
  RC_ASSERT(!report.reason.empty());
  // The report points at the damaged row (a moved seq is reported where the gap opened).
  if (column != "seq") RC_ASSERT(report.first_bad_seq == seq);
}

}  // namespace
}  // namespace gfp::store
