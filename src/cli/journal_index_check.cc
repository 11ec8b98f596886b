#include "cli/journal_index_check.h"

#include <utility>

#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"

namespace gfp::cli {
namespace {

std::uint64_t Mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

using SeqTimes = std::vector<std::pair<std::uint64_t, std::int64_t>>;

std::string Describe(const std::string& tag, const SeqTimes& expected, const SeqTimes& stored,
                     std::uint64_t* bad_seq) {
  std::size_t i = 0;
  while (i < expected.size() && i < stored.size() && expected[i] == stored[i]) ++i;
  std::string where = "the index of subject " + tag + " disagrees with the events";
  if (i < expected.size() && (i == stored.size() || expected[i].first < stored[i].first)) {
    *bad_seq = expected[i].first;
    return where + ": event seq " + std::to_string(*bad_seq) + " names it but has no index row";
  }
  if (i < stored.size() && (i == expected.size() || stored[i].first < expected[i].first)) {
    *bad_seq = stored[i].first;
    return where + ": an index row names event seq " + std::to_string(*bad_seq) +
           ", which does not name it";
  }
  if (i < stored.size()) {
    *bad_seq = stored[i].first;
    return where + ": the index row of event seq " + std::to_string(*bad_seq) + " has time " +
           std::to_string(stored[i].second) + ", the event " + std::to_string(expected[i].second);
  }
  return where;
}

}  // namespace

void IndexCheck::AddRow(Rows& rows, std::uint64_t seq, std::int64_t time) {
  ++rows.count;
  rows.fingerprint += Mix(seq * 0x9e3779b97f4a7c15ULL ^ Mix(static_cast<std::uint64_t>(time)));
}

void IndexCheck::Add(std::uint64_t seq, const events::Event& event) {
  last_seq_ = seq;
  if (seq < from_) return;
  for (const std::string& tag : sm::EventSubjects(event)) {
    AddRow(expected_[tag], seq, event.time_unix_micros());
  }
}

Result<std::string> IndexCheck::Compare(const store::Journal& journal,
                                        std::uint64_t* bad_seq) const {
  std::map<std::string, Rows> stored;
  GFP_RETURN_IF_ERROR(journal.ForEachSubjectRow(
      from_, last_seq_, [&](std::string_view tag, std::uint64_t seq, std::int64_t time) -> Status {
        AddRow(stored[std::string(tag)], seq, time);
        return Status::Ok();
      }));
  auto e = expected_.begin();
  auto s = stored.begin();
  while (e != expected_.end() || s != stored.end()) {
    // The first tag (in order) whose rows differ, present on either side.
    if (s == stored.end() || (e != expected_.end() && e->first < s->first)) {
      return Explain(journal, e->first, bad_seq);
    }
    if (e == expected_.end() || s->first < e->first) return Explain(journal, s->first, bad_seq);
    if (e->second.count != s->second.count || e->second.fingerprint != s->second.fingerprint) {
      return Explain(journal, e->first, bad_seq);
    }
    ++e;
    ++s;
  }
  return std::string();
}

Result<std::string> IndexCheck::Explain(const store::Journal& journal, const std::string& tag,
                                        std::uint64_t* bad_seq) const {
  SeqTimes expected;
  SeqTimes stored;
  if (last_seq_ > 0 && last_seq_ >= from_) {  // (to_seq 0 would read to the end)
    GFP_RETURN_IF_ERROR(
        journal.ForEach(from_, last_seq_, [&](const store::StoredEvent& ev) -> Status {
          GFP_ASSIGN_OR_RETURN(events::Event e,
                               sm::DecodeEvent(ev.type, ev.time_unix_micros, ev.payload));
          for (const std::string& t : sm::EventSubjects(e)) {
            if (t == tag) expected.emplace_back(ev.seq, ev.time_unix_micros);
          }
          return Status::Ok();
        }));
  }
  GFP_RETURN_IF_ERROR(journal.ForEachSubjectRow(
      from_, last_seq_, [&](std::string_view t, std::uint64_t seq, std::int64_t time) -> Status {
        if (t == tag) stored.emplace_back(seq, time);
        return Status::Ok();
      }));
  return Describe(tag, expected, stored, bad_seq);
}

}  // namespace gfp::cli
