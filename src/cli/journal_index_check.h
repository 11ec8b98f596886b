// `journal verify`: the subject index (derived data, not hashed) against the events it indexes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/events.pb.h"
#include "store/journal.h"

namespace gfp::cli {

// What the index must hold, as verify reads the events: per tag, a count and a fingerprint of
// the (seq, time) rows, so the check needs little memory however long the journal.
class IndexCheck {
 public:
  // from: the first seq whose subjects the journal records (store::Journal::SubjectsFrom).
  explicit IndexCheck(std::uint64_t from) : from_(from) {}

  // Adds the rows sm::EventSubjects calls for (events before `from` have none). Events come in
  // seq order.
  void Add(std::uint64_t seq, const events::Event& event);

  // Empty when the stored index holds exactly the rows added; else why not, naming the first
  // seq where they differ in *bad_seq. Only index rows up to the last seq added count: serve may
  // append (and index) more events while verify runs.
  Result<std::string> Compare(const store::Journal& journal, std::uint64_t* bad_seq) const;

 private:
  struct Rows {
    std::uint64_t count = 0;
    std::uint64_t fingerprint = 0;
  };
  static void AddRow(Rows& rows, std::uint64_t seq, std::int64_t time);
  // The first difference for one tag: re-reads the events and that tag's index rows.
  Result<std::string> Explain(const store::Journal& journal, const std::string& tag,
                              std::uint64_t* bad_seq) const;

  std::uint64_t from_;
  std::uint64_t last_seq_ = 0;  // the newest event added
  std::map<std::string, Rows> expected_;
};

}  // namespace gfp::cli
