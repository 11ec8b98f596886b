// Indexing the events a schema-1 binary wrote (docs/journal-format.md, "Index"): newest first,
// one transaction per batch, so the index is right from subjects_from_seq on after every commit.
#include <sqlite3.h>

#include <exception>
#include <string>
#include <vector>

#include "store/journal.h"
#include "store/journal_impl.h"
#include "store/sqlite_status.h"
#include "store/transaction.h"

namespace gfp::store {
namespace {

// Indexes events lo..hi and moves subjects_from_seq to lo, in one transaction.
Status IndexBatch(Journal::Impl& j, std::uint64_t lo, std::uint64_t hi,
                  const Journal::TagsOf& tags_of) {
  ForgetNewTagsUnlessCommitted new_tags(j);
  const std::string operation = "indexing events " + std::to_string(lo) + ".." +
                                std::to_string(hi) + " of journal " + j.name();
  GFP_ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(j.handle(), Transaction::Kind::kWrite,
                                                           operation, j.path));
  GFP_RETURN_IF_ERROR(j.ScanRows(ToSqlSeq(lo), ToSqlSeq(hi), [&](const EventRow& row) -> Status {
    auto tags = tags_of(row.type, row.time_unix_micros, row.payload);
    if (!tags.ok()) {
      return tags.status().WithContext("indexing event seq " + std::to_string(row.seq) +
                                       " of journal " + j.name());
    }
    return j.InsertSubjects(*tags, static_cast<std::uint64_t>(row.seq), row.time_unix_micros,
                            new_tags.added());
  }));
  const std::string move_from =
      "UPDATE journal_meta SET value = " + std::to_string(lo) + " WHERE key = 'subjects_from_seq'";
  GFP_RETURN_IF_ERROR(ExecSql(j.handle(), move_from.c_str(), operation, j.path));
  GFP_RETURN_IF_ERROR(txn.Commit());
  new_tags.Committed();
  j.NoteWrite();
  return Status::Ok();
}

}  // namespace

Result<std::uint64_t> Journal::IndexUntaggedEvents(const TagsOf& tags_of, std::uint64_t batch) {
  CallGuard guard(*impl_);
  GFP_RETURN_IF_ERROR(guard.status());
  Impl& j = *impl_;
  if (j.mode != OpenMode::kReadWrite) {
    return FailedPrecondition("journal " + j.name() + " is open read-only; cannot index it");
  }
  if (!tags_of || batch == 0) {
    return InvalidArgument("indexing journal " + j.name() + ": no tag function or batch size 0");
  }
  std::uint64_t indexed = 0;
  try {
    GFP_ASSIGN_OR_RETURN(std::uint64_t from, j.SubjectsFromSeq());
    while (from > 1) {
      GFP_RETURN_IF_ERROR(CheckStillAtPath());
      const std::uint64_t lo = from > batch ? from - batch : 1;
      GFP_RETURN_IF_ERROR(IndexBatch(j, lo, from - 1, tags_of));
      indexed += from - lo;
      from = lo;
    }
    return indexed;
  } catch (const std::exception& e) {
    return StatusFromException(e, "indexing events", j.path);
  }
}

}  // namespace gfp::store
