// Verify: a clean journal passes; a changed byte in any event column, a deleted row, or a
// failing per-event check is reported with the seq where it happened.
#include <gtest/gtest.h>

#include <tuple>

#include "journal_test_util.h"

namespace gfp::store {
namespace {

using testing::Describe;
using testing::MakeEvents;
using testing::OpenOrDie;
using testing::RawDb;
using testing::TempDir;

constexpr std::uint64_t kEvents = 40;

// A closed journal of kEvents events in a temp dir.
class JournalVerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = OpenOrDie(path_, OpenMode::kReadWrite);
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->Append(MakeEvents(1, kEvents)).ok());
  }
  VerifyReport VerifyReadOnly(const std::function<Status(const StoredEvent&)>& fn = {}) {
    auto reader = OpenOrDie(path_, OpenMode::kReadOnly);
    if (reader == nullptr) return {false, 0, 0, 0, "open failed"};
    return reader->Verify(fn);
  }
  TempDir dir_;
  std::filesystem::path path_ = dir_ / "journal.db";
};

TEST_F(JournalVerifyTest, IntactJournalPasses) {
  const VerifyReport report = VerifyReadOnly();
  EXPECT_TRUE(report.ok) << Describe(report);
  EXPECT_EQ(report.events_checked, kEvents);
  EXPECT_EQ(report.first_bad_seq, 0U);
  EXPECT_TRUE(report.reason.empty());
}

TEST(JournalVerifyEmptyTest, EmptyJournalPasses) {
  TempDir dir;
  auto journal = OpenOrDie(dir / "journal.db", OpenMode::kReadWrite);
  const VerifyReport report = journal->Verify({});
  EXPECT_TRUE(report.ok) << Describe(report);
  EXPECT_EQ(report.events_checked, 0U);
}

TEST_F(JournalVerifyTest, PerEventCallbackSeesEveryEventInOrder) {
  std::uint64_t next = 1;
  const VerifyReport report = VerifyReadOnly([&](const StoredEvent& ev) {
    EXPECT_EQ(ev.seq, next);
    EXPECT_EQ(ev.payload, testing::MakeEvent(next).payload);
    ++next;
    return Status::Ok();
  });
  EXPECT_TRUE(report.ok) << Describe(report);
  EXPECT_EQ(next, kEvents + 1);
}

TEST_F(JournalVerifyTest, PerEventFailureIsReportedWithItsSeq) {
  const VerifyReport report = VerifyReadOnly([](const StoredEvent& ev) {
    return ev.seq == 7 ? DataLoss("payload does not decode as an event") : Status::Ok();
  });
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 7U) << Describe(report);
  EXPECT_NE(report.reason.find("payload does not decode as an event"), std::string::npos)
      << Describe(report);
  EXPECT_EQ(report.events_checked, 6U);
}

enum class Column { kPayload, kType, kTime, kHash };

std::string ColumnName(Column c) {
  switch (c) {
    case Column::kPayload:
      return "payload";
    case Column::kType:
      return "type";
    case Column::kTime:
      return "time_us";
    case Column::kHash:
      return "hash";
  }
  return "?";
}

class JournalVerifyFlipTest
    : public JournalVerifyTest,
      public ::testing::WithParamInterface<std::tuple<Column, std::uint64_t>> {};

TEST_P(JournalVerifyFlipTest, OneChangedByteIsReportedAtItsSeq) {
  const auto [column, seq] = GetParam();
  const auto s = static_cast<std::int64_t>(seq);
  {
    RawDb raw(path_);
    int rc = SQLITE_ERROR;
    if (column == Column::kTime) {
      const std::int64_t t =
          raw.QueryInt("SELECT time_us FROM events WHERE seq = " + std::to_string(s));
      rc = raw.WriteInt("events", "time_us", s, t ^ 0x100);  // one bit in the second byte
    } else {
      std::string bytes = raw.ReadBytes("events", ColumnName(column), s);
      ASSERT_FALSE(bytes.empty());
      bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x20);
      rc = column == Column::kType ? raw.WriteText("events", "type", s, bytes)
                                   : raw.WriteBlob("events", ColumnName(column), s, bytes);
    }
    ASSERT_EQ(rc, SQLITE_OK) << raw.last_error();
  }
  const VerifyReport report = VerifyReadOnly();
  EXPECT_FALSE(report.ok) << "changed " << ColumnName(column) << " at seq " << seq
                          << " went unnoticed";
  EXPECT_EQ(report.first_bad_seq, seq) << Describe(report);
  EXPECT_NE(report.reason.find("event seq " + std::to_string(seq)), std::string::npos)
      << Describe(report);
  EXPECT_EQ(report.events_checked, seq - 1);
}

INSTANTIATE_TEST_SUITE_P(EveryColumn, JournalVerifyFlipTest,
                         ::testing::Combine(::testing::Values(Column::kPayload, Column::kType,
                                                              Column::kTime, Column::kHash),
                                            ::testing::Values(1U, 17U, kEvents)),
                         [](const auto& param_info) {
                           return ColumnName(std::get<0>(param_info.param)) + "_seq" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

TEST_F(JournalVerifyTest, DeletedRowIsReportedAsAGap) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("DELETE FROM events WHERE seq = 23"), SQLITE_OK);
  }
  const VerifyReport report = VerifyReadOnly();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 23U) << Describe(report);
  EXPECT_NE(report.reason.find("seq 23 is missing"), std::string::npos) << Describe(report);
}

TEST_F(JournalVerifyTest, DeletedFirstRowIsReported) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("DELETE FROM events WHERE seq = 1"), SQLITE_OK);
  }
  const VerifyReport report = VerifyReadOnly();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 1U) << Describe(report);
}

TEST_F(JournalVerifyTest, RenumberedRowIsReported) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.Exec("UPDATE events SET seq = 1000 WHERE seq = 12"), SQLITE_OK);
  }
  const VerifyReport report = VerifyReadOnly();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 12U) << Describe(report);
}

TEST_F(JournalVerifyTest, ShortHashIsReported) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.WriteBlob("events", "hash", 3, std::string(31, 'h')), SQLITE_OK);
  }
  const VerifyReport report = VerifyReadOnly();
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 3U) << Describe(report);
  EXPECT_NE(report.reason.find("31 bytes"), std::string::npos) << Describe(report);
}

TEST_F(JournalVerifyTest, ForEachRefusesAnEventWithAMalformedHash) {
  {
    RawDb raw(path_);
    ASSERT_EQ(raw.WriteBlob("events", "hash", 3, ""), SQLITE_OK);
  }
  auto reader = OpenOrDie(path_, OpenMode::kReadOnly);
  const Status s = reader->ForEach(1, 0, [](const StoredEvent&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss) << Describe(s);
  EXPECT_NE(s.message().find("event seq 3"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace gfp::store
