// The subject/time index (schema 2): Journal::ForEachMatching answers what a full scan answers,
// on random journals, and so does ForEachMatchingUnchecked through ReadAheadChecked (with each
// event's predecessor hash as stored); a migrated schema-1 journal answers from a scan for its
// untagged events.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "journal_test_util.h"
#include "store/read_ahead.h"

namespace gfp::store {
namespace {

using testing::Describe;
using testing::MakeEvent;
using testing::MakeEvents;
using testing::OpenOrDie;
using testing::RawDb;
using testing::TempDir;

const char* const kTags[] = {"p:1", "p:2", "p:3", "d:0000:1b:00.0", "d:0000:43:00.0", "p:30"};

// A random event: a time that mostly grows but sometimes steps back, and 0-3 random tags
// (sometimes one twice).
NewEvent RandomEvent(std::mt19937_64& rng, std::uint64_t i, std::int64_t* clock) {
  NewEvent e = MakeEvent(i);
  *clock += static_cast<std::int64_t>(rng() % 1000) - (rng() % 10 == 0 ? 3000 : 0);
  e.time_unix_micros = *clock;
  const std::size_t n = rng() % 4;
  for (std::size_t k = 0; k < n; ++k) e.subjects.push_back(kTags[rng() % std::size(kTags)]);
  return e;
}

// What a scan of the appended events answers: seqs with time >= since carrying the tag.
std::vector<std::uint64_t> Expected(const std::vector<NewEvent>& events, const EventFilter& f) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const NewEvent& e = events[i];
    if (e.time_unix_micros < f.since_time_us) continue;
    if (!f.subject.empty() &&
        std::find(e.subjects.begin(), e.subjects.end(), f.subject) == e.subjects.end()) {
      continue;
    }
    out.push_back(i + 1);
  }
  return out;
}

std::vector<std::uint64_t> Matching(const Journal& journal, const EventFilter& f) {
  std::vector<std::uint64_t> out;
  Status s = journal.ForEachMatching(f, [&](const StoredEvent& ev) {
    out.push_back(ev.seq);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << Describe(s);
  return out;
}

// Every event's stored hash, by seq - 1, from a plain scan.
std::vector<Hash> StoredHashes(const Journal& journal) {
  std::vector<Hash> out;
  EXPECT_TRUE(journal
                  .ForEach(1, 0,
                           [&](const StoredEvent& ev) {
                             out.push_back(ev.hash);
                             return Status::Ok();
                           })
                  .ok());
  return out;
}

// Matching through the unchecked read, checked by ReadAheadChecked on this thread; each
// predecessor hash the read hands over must be the stored hash of seq - 1.
Status MatchingCheckedAhead(const Journal& journal, const EventFilter& f,
                            const std::vector<Hash>& stored, std::vector<std::uint64_t>* out) {
  const auto read = [&](const Journal::LinkedEventSink& sink) {
    return journal.ForEachMatchingUnchecked(f, [&](const StoredEvent& ev, const Hash& before) {
      const Hash expected =
          ev.seq == 1 || ev.seq - 2 >= stored.size() ? Hash{} : stored[ev.seq - 2];
      EXPECT_EQ(before, expected) << "the predecessor hash handed over with seq " << ev.seq;
      return sink(ev, before);
    });
  };
  return ReadAheadChecked(read, journal.path().string(), [&](const StoredEvent& ev) {
    out->push_back(ev.seq);
    return Status::Ok();
  });
}

TEST(JournalIndexTest, AnswersLikeAFullScanOnRandomJournals) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    TempDir dir;
    auto journal = OpenOrDie(dir / "journal.db", OpenMode::kReadWrite);
    ASSERT_NE(journal, nullptr);
    std::vector<NewEvent> all;
    std::int64_t clock = 1'000'000;
    while (all.size() < 400) {
      std::vector<NewEvent> batch;
      for (std::size_t k = 1 + rng() % 20; k > 0; --k) {
        batch.push_back(RandomEvent(rng, all.size() + batch.size() + 1, &clock));
      }
      ASSERT_TRUE(journal->Append(batch).ok());
      all.insert(all.end(), batch.begin(), batch.end());
    }
    auto reader = OpenOrDie(dir / "journal.db", OpenMode::kReadOnly);
    const std::vector<Hash> stored = StoredHashes(*reader);
    for (int q = 0; q < 30; ++q) {
      EventFilter f;
      if (rng() % 4 != 0) f.subject = kTags[rng() % std::size(kTags)];
      if (q == 0) f.subject = "p:unknown";
      if (rng() % 3 != 0) {
        f.since_time_us = all[rng() % all.size()].time_unix_micros + (rng() % 3) - 1;
      }
      SCOPED_TRACE("subject '" + f.subject + "' since " + std::to_string(f.since_time_us));
      EXPECT_EQ(Matching(*reader, f), Expected(all, f));
      std::vector<std::uint64_t> ahead;
      const Status s = MatchingCheckedAhead(*reader, f, stored, &ahead);
      EXPECT_TRUE(s.ok()) << Describe(s);
      EXPECT_EQ(ahead, Expected(all, f));
    }
  }
}

TEST(JournalIndexTest, AppendRejectsAnEmptyTagAndAFailedAppendLeavesNoRows) {
  TempDir dir;
  auto journal = OpenOrDie(dir / "journal.db", OpenMode::kReadWrite);
  NewEvent bad = MakeEvent(1);
  bad.subjects = {"p:1", ""};
  EXPECT_EQ(journal->Append({&bad, 1}).status().code(), ErrorCode::kInvalidArgument);
  RawDb raw(dir / "journal.db");
  EXPECT_EQ(raw.QueryInt("SELECT count(*) FROM event_subjects"), 0);
}

// `events` appended, then `damage` done to the file behind the journal's back; the damaged
// journal opened for reading.
std::unique_ptr<Journal> JournalDamagedBy(const TempDir& dir, const std::vector<NewEvent>& events,
                                          const std::function<int(RawDb&)>& damage) {
  {
    auto journal = OpenOrDie(dir / "journal.db", OpenMode::kReadWrite);
    EXPECT_TRUE(journal->Append(events).ok());
  }
  {
    RawDb raw(dir / "journal.db");
    EXPECT_EQ(damage(raw), SQLITE_OK) << raw.last_error();
  }
  return OpenOrDie(dir / "journal.db", OpenMode::kReadOnly);
}

// Five events, only the last tagged "p:1", then `damage`.
std::unique_ptr<Journal> FifthEventTaggedThen(const TempDir& dir,
                                              const std::function<int(RawDb&)>& damage) {
  std::vector<NewEvent> events = MakeEvents(1, 5);
  events[4].subjects = {"p:1"};
  return JournalDamagedBy(dir, events, damage);
}

// A reader of a journal of `count` events, all tagged p:1, whose event `deleted` was then
// removed behind its back (its index row stays).
std::unique_ptr<Journal> TaggedJournalWithout(const TempDir& dir, std::uint64_t count,
                                              std::uint64_t deleted) {
  std::vector<NewEvent> events = MakeEvents(1, count);
  for (auto& e : events) e.subjects = {"p:1"};
  return JournalDamagedBy(dir, events, [deleted](RawDb& raw) {
    return raw.Exec("DELETE FROM events WHERE seq = " + std::to_string(deleted));
  });
}

// An index row that names a deleted event is damage, not a silent gap.
TEST(JournalIndexTest, AnIndexRowWithoutItsEventIsReportedAsDamage) {
  TempDir dir;
  auto reader = TaggedJournalWithout(dir, 5, 5);
  EventFilter f;
  f.subject = "p:1";
  Status s = reader->ForEachMatching(f, [](const StoredEvent&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("damaged at seq 5"), std::string::npos) << s.message();
}

// Consecutive indexed seqs are read as one run: an event missing inside the run is named, not
// skipped (its successor would otherwise be checked against the wrong predecessor).
TEST(JournalIndexTest, AnEventMissingInsideARunOfIndexedSeqsIsNamed) {
  TempDir dir;
  auto reader = TaggedJournalWithout(dir, 6, 3);
  EventFilter f;
  f.subject = "p:1";
  std::vector<std::uint64_t> listed;
  Status s = reader->ForEachMatching(f, [&](const StoredEvent& ev) {
    listed.push_back(ev.seq);
    return Status::Ok();
  });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("damaged at seq 3: the index names event seq 3, which is missing"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(listed, (std::vector<std::uint64_t>{1, 2}));
}

// A journal of `count` events, those in `tagged` tagged "p:1", whose event `changed` then had its
// payload changed on disk; opened read-only.
std::unique_ptr<Journal> JournalWithChangedPayload(const TempDir& dir, std::uint64_t count,
                                                   const std::vector<std::uint64_t>& tagged,
                                                   std::uint64_t changed) {
  auto journal = OpenOrDie(dir / "journal.db", OpenMode::kReadWrite);
  std::vector<NewEvent> events = MakeEvents(1, count);
  for (std::uint64_t seq : tagged) events[seq - 1].subjects = {"p:1"};
  EXPECT_TRUE(journal->Append(events).ok());
  journal.reset();
  {
    RawDb raw(dir / "journal.db");
    EXPECT_EQ(raw.WriteBlob("events", "payload", static_cast<std::int64_t>(changed), "tampered"),
              SQLITE_OK);
  }
  return OpenOrDie(dir / "journal.db", OpenMode::kReadOnly);
}

// A changed payload of a listed event fails its hash check.
TEST(JournalIndexTest, AChangedEventFoundThroughTheIndexFailsItsHashCheck) {
  TempDir dir;
  auto reader = JournalWithChangedPayload(dir, 5, {3}, 3);
  EventFilter f;
  f.subject = "p:1";
  Status s = reader->ForEachMatching(f, [](const StoredEvent&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("damaged at seq 3"), std::string::npos) << s.message();
}

// ... also when the check runs on the consuming thread: the same message, and every event before
// the changed one listed.
TEST(JournalIndexTest, AChangedEventFailsTheCheckAheadAsItFailsForEachMatching) {
  TempDir dir;
  auto reader = JournalWithChangedPayload(dir, 6, {1, 2, 3, 4, 5, 6}, 4);
  EventFilter f;
  f.subject = "p:1";
  const Status inline_check =
      reader->ForEachMatching(f, [](const StoredEvent&) { return Status::Ok(); });
  std::vector<std::uint64_t> listed;
  const Status ahead = MatchingCheckedAhead(*reader, f, StoredHashes(*reader), &listed);
  EXPECT_EQ(ahead.code(), ErrorCode::kDataLoss);
  EXPECT_NE(ahead.message().find("damaged at seq 4: stored hash"), std::string::npos)
      << ahead.message();
  EXPECT_EQ(ahead.message(), inline_check.message());
  EXPECT_EQ(listed, (std::vector<std::uint64_t>{1, 2, 3}));
}

Status ListP1(const Journal& journal) {
  EventFilter f;
  f.subject = "p:1";
  return journal.ForEachMatching(f, [](const StoredEvent&) { return Status::Ok(); });
}

// A listed event is checked against its predecessor's stored hash also where the predecessor
// carries no asked tag (the index does not name it): a predecessor that is gone is damage named
// at its seq.
TEST(JournalIndexTest, AListedEventsMissingUntaggedPredecessorIsNamed) {
  TempDir dir;
  auto reader = FifthEventTaggedThen(
      dir, [](RawDb& raw) { return raw.Exec("DELETE FROM events WHERE seq = 4"); });
  Status s = ListP1(*reader);
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("damaged at seq 4: event seq 4 is missing"), std::string::npos)
      << s.message();
}

// ... and a predecessor whose stored hash is cut short is named with what is wrong with it.
TEST(JournalIndexTest, AListedEventsPredecessorWithACutHashIsNamed) {
  TempDir dir;
  auto reader = FifthEventTaggedThen(
      dir, [](RawDb& raw) { return raw.WriteBlob("events", "hash", 4, "abc"); });
  Status s = ListP1(*reader);
  EXPECT_EQ(s.code(), ErrorCode::kDataLoss);
  EXPECT_NE(s.message().find("damaged at seq 4: its hash is 3 bytes, expected 32"),
            std::string::npos)
      << s.message();
}

// Golden fixture: schema-1 events carry no tags. Read as it is (reader) and once migrated
// (writer), history still finds them (every one is handed over for the caller to match), and
// events appended after the migration are found through the index.
TEST(JournalIndexTest, MigratedSchema1JournalAnswersFromAScanForItsOldEvents) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::filesystem::copy_file(std::filesystem::path(GFP_STORE_FIXTURE_DIR) / "journal-v1.db", path);
  EventFilter f;
  f.subject = "p:9";
  {
    auto reader = OpenOrDie(path, OpenMode::kReadOnly);
    EXPECT_EQ(Matching(*reader, f).size(), 20U);
    EXPECT_EQ(*reader->SubjectsFrom(), 21U);
  }
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  EXPECT_EQ(*writer->SubjectsFrom(), 21U);
  std::vector<NewEvent> more = MakeEvents(21, 3);
  more[1].subjects = {"p:9"};
  ASSERT_TRUE(writer->Append(more).ok());
  std::vector<std::uint64_t> expected;
  for (std::uint64_t s = 1; s <= 20; ++s) expected.push_back(s);
  expected.push_back(22);
  EXPECT_EQ(Matching(*writer, f), expected);
  EXPECT_TRUE(writer->Verify({}).ok);
}

// The untagged part is checked whole, also the events before `since` that are not listed: a
// changed one stops the listing at its seq, whichever side does the listed events' checks.
TEST(JournalIndexTest, AChangedUntaggedEventBeforeSinceStopsTheListing) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::filesystem::copy_file(std::filesystem::path(GFP_STORE_FIXTURE_DIR) / "journal-v1.db", path);
  {
    RawDb raw(path);
    ASSERT_EQ(raw.WriteBlob("events", "payload", 5, "tampered"), SQLITE_OK);
  }
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  EventFilter f;
  ASSERT_TRUE(reader
                  ->ForEach(11, 11,
                            [&](const StoredEvent& ev) {
                              f.since_time_us = ev.time_unix_micros;
                              return Status::Ok();
                            })
                  .ok());
  const Status inline_check =
      reader->ForEachMatching(f, [](const StoredEvent&) { return Status::Ok(); });
  EXPECT_NE(inline_check.message().find("damaged at seq 5: stored hash"), std::string::npos)
      << inline_check.message();
  std::vector<std::uint64_t> listed;
  const Status ahead = MatchingCheckedAhead(*reader, f, StoredHashes(*reader), &listed);
  EXPECT_EQ(ahead.message(), inline_check.message());
  EXPECT_TRUE(listed.empty());
}

// The tags the tests below give the fixture's events (MakeEvent(i) has payload "payload-<i>...").
// Event 8 alone names "new:8", so a failed batch holding it must not leave that tag known.
std::uint64_t IndexOf(std::string_view payload) {
  return std::stoull(std::string(payload.substr(std::string_view("payload-").size())));
}
std::vector<std::string> FixtureTags(std::uint64_t i) {
  std::vector<std::string> tags;
  if (i % 3 == 0) tags.push_back("p:9");
  if (i % 4 == 0) tags.push_back("d:0000:1b:00.0");
  if (i == 8) tags.push_back("new:8");
  return tags;
}
Journal::TagsOf FixtureTagsOf(std::uint64_t fail_at = 0) {
  return [fail_at](std::string_view, std::int64_t,
                   std::string_view payload) -> Result<std::vector<std::string>> {
    const std::uint64_t i = IndexOf(payload);
    if (i == fail_at) return DataLoss("event " + std::to_string(i) + " cannot be decoded");
    return FixtureTags(i);
  };
}

// Every tag of the fixture's 20 events, found through the index and through nothing else.
void ExpectEveryTagIndexed(const Journal& journal) {
  for (const char* tag : {"p:9", "d:0000:1b:00.0", "new:8"}) {
    std::vector<std::uint64_t> expected;
    for (std::uint64_t i = 1; i <= 20; ++i) {
      const auto tags = FixtureTags(i);
      if (std::find(tags.begin(), tags.end(), tag) != tags.end()) expected.push_back(i);
    }
    std::vector<std::uint64_t> indexed;
    Status s =
        journal.ForEachSubjectRow(1, 20, [&](std::string_view t, std::uint64_t seq, std::int64_t) {
          if (t == tag) indexed.push_back(seq);
          return Status::Ok();
        });
    ASSERT_TRUE(s.ok()) << Describe(s);
    EXPECT_EQ(indexed, expected) << tag;
    EventFilter f;
    f.subject = tag;
    EXPECT_EQ(Matching(journal, f), expected) << tag;
  }
}

// After an upgrade the writer gives a schema-1 journal's events their index rows, newest batch
// first; history then answers from the index alone (SubjectsFrom 1).
TEST(JournalIndexTest, IndexUntaggedEventsGivesSchema1EventsTheirRows) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::filesystem::copy_file(std::filesystem::path(GFP_STORE_FIXTURE_DIR) / "journal-v1.db", path);
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  auto indexed = writer->IndexUntaggedEvents(FixtureTagsOf(), /*batch=*/7);
  ASSERT_TRUE(indexed.ok()) << Describe(indexed.status());
  EXPECT_EQ(*indexed, 20U);
  EXPECT_EQ(*writer->SubjectsFrom(), 1U);
  ExpectEveryTagIndexed(*writer);
  EXPECT_EQ(*writer->IndexUntaggedEvents(FixtureTagsOf()), 0U);  // nothing left
  EXPECT_TRUE(writer->Verify({}).ok);
  auto reader = OpenOrDie(path, OpenMode::kReadOnly);
  EXPECT_EQ(reader->IndexUntaggedEvents(FixtureTagsOf()).status().code(),
            ErrorCode::kFailedPrecondition);
}

// An event whose tags cannot be read stops indexing with its batch rolled back (a tag first
// seen in that batch forgotten with it); the batches before stay, and the next call resumes.
TEST(JournalIndexTest, IndexingStopsAtAnUnreadableEventAndTheNextCallResumes) {
  TempDir dir;
  const auto path = dir / "journal.db";
  std::filesystem::copy_file(std::filesystem::path(GFP_STORE_FIXTURE_DIR) / "journal-v1.db", path);
  auto writer = OpenOrDie(path, OpenMode::kReadWrite);
  // Batches 14..20, then 7..13: event 8 names "new:8", event 10 fails.
  auto failed = writer->IndexUntaggedEvents(FixtureTagsOf(/*fail_at=*/10), /*batch=*/7);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("indexing event seq 10"), std::string::npos)
      << failed.status().message();
  EXPECT_EQ(*writer->SubjectsFrom(), 14U);
  EventFilter p9;
  p9.subject = "p:9";
  EXPECT_EQ(Matching(*writer, p9),
            (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 18}));
  auto resumed = writer->IndexUntaggedEvents(FixtureTagsOf(), /*batch=*/7);
  ASSERT_TRUE(resumed.ok()) << Describe(resumed.status());
  EXPECT_EQ(*resumed, 13U);
  ExpectEveryTagIndexed(*writer);
}

}  // namespace
}  // namespace gfp::store
