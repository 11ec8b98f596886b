// The persistent, tamper-evident event journal: an SQLite file (WAL, synchronous=FULL unless an
// append asks for less, see Durability) holding events with a SHA-256 hash chain, plus state
// snapshots bound to that chain. One writer per file (an flock on the journal file itself); any
// number of read-only openers, also while the writer runs.
// The file format is described in docs/journal-format.md.
//
// Thread safety: a Journal may be shared between threads; calls are serialised internally.
// Callbacks given to ForEach/Verify must not call back into the same Journal (such a call fails
// with FailedPrecondition instead of deadlocking).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/journal_types.h"

namespace gfp::store {

class ChainHasher;  // store/hash_chain.h

class Journal {
 public:
  // The schema version this binary creates and migrates to (= number of files in migrations/).
  static constexpr int kLatestSchemaVersion = 2;
  // Snapshot retention: besides the newest ones, PruneSnapshots keeps the oldest snapshot of
  // every span of this many seqs, so replaying to any seq starts at most about this far back.
  static constexpr std::uint64_t kSparseSnapshotEvery = 100'000;
  // kReadWrite: checks the path before creating anything (a symbolic link, directory, FIFO or
  //   other non-regular file is refused), creates the parent directories (0700) and the file
  //   (0600) only when no file exists, and locks the file itself (a second writer, also through a
  //   hard link, fails at once with AlreadyExists). An existing zero-length file becomes a new
  //   journal (open_note() says so); any other file without journal tables is refused (DataLoss:
  //   most likely its events are in a lost -wal). Then it migrates the schema and re-hashes the
  //   chain from the newest valid snapshot (or seq 1) to the end, and refuses a snapshot bound to
  //   an event beyond the end (DataLoss naming the seq). Older history is not re-hashed here: see
  //   Verify and BackgroundVerifier.
  // kReadOnly: creates nothing of its own; NotFound for a missing file, FailedPrecondition for a
  //   non-regular file, a schema this binary does not know, or one whose first migration never
  //   ran (an older schema is read as it is, not migrated: SchemaVersion() tells), InvalidArgument
  //   for a file that is not a journal. SQLite itself creates the -wal/-shm of a WAL journal when
  //   they are missing and the directory is writable; where they cannot be created (read-only
  //   directory or media) the file is opened immutable (open_note() says so). Does not check the
  //   chain (use Verify), so a damaged journal can still be inspected.
  static Result<std::unique_ptr<Journal>> Open(const std::filesystem::path& path, OpenMode mode);

  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends all events in one transaction, committed with `durability`, and returns the seq of
  // the first one. On failure nothing is appended and the journal is unchanged
  // (ResourceExhausted on disk full).
  Result<std::uint64_t> Append(std::span<const NewEvent> events,
                               Durability durability = Durability::kSurvivesPowerLoss);

  // Seq of the newest event (0 when empty). For a read-only journal: as of Open or the last scan.
  std::uint64_t LastSeq() const;

  // Calls fn for each event with from_seq <= seq <= to_seq (to_seq 0 = to the end), in seq
  // order. A failed Status from fn stops the scan and is returned. Does not check hashes.
  // The StoredEvent passed to fn is reused between calls: copy what you keep.
  Status ForEach(std::uint64_t from_seq, std::uint64_t to_seq,
                 const std::function<Status(const StoredEvent&)>& fn) const;

  // Like ForEach, and also checks what it reads: seqs contiguous from from_seq (0 = 1) up to
  // to_seq (or the last event), each event re-hashing to its stored hash, chained from the stored
  // hash of from_seq-1 (the zero hash for seq 1). Every event before the first bad one is passed
  // to fn; then DataLoss naming that seq.
  Status ForEachVerified(std::uint64_t from_seq, std::uint64_t to_seq,
                         const std::function<Status(const StoredEvent&)>& fn) const;

  // Calls fn, in seq order, for the events that can match `filter`: from SubjectsFrom() on,
  // exactly those with time_us >= since_time_us and (when filter.subject is set) tagged with it,
  // found through the index; before it (events written before the journal recorded tags, by a
  // binary of schema version 1), every event with time_us >= since_time_us, which the caller must
  // match itself. Checks what it passes: each indexed event re-hashes to its stored hash chained
  // from its predecessor's stored hash, the untagged prefix is checked as ForEachVerified does;
  // DataLoss naming the seq otherwise. Only `journal verify` checks the whole chain.
  Status ForEachMatching(const EventFilter& filter,
                         const std::function<Status(const StoredEvent&)>& fn) const;
  // The same events, each with the stored hash of its predecessor (seq - 1; the zero hash for
  // seq 1) and its own hash not yet re-computed: the caller checks it with CheckEventLink before
  // trusting the event (ReadAheadChecked does, on the consuming thread). Everything else
  // ForEachMatching checks is checked here.
  using LinkedEventSink = std::function<Status(const StoredEvent&, const Hash& predecessor)>;
  Status ForEachMatchingUnchecked(const EventFilter& filter, const LinkedEventSink& fn) const;
  // The first seq whose subjects the journal records (1 for a journal created with them).
  Result<std::uint64_t> SubjectsFrom() const;

  // An event's subject tags, from its type and payload (the store cannot read them).
  using TagsOf = std::function<Result<std::vector<std::string>>(
      std::string_view type, std::int64_t time_unix_micros, std::string_view payload)>;
  // Writer: gives the events before SubjectsFrom() (written by a schema-1 binary) their index
  // rows, newest first, `batch` (>= 1) events per transaction, moving SubjectsFrom() down with
  // each commit. A crash or an error (from tags_of too) leaves an index that is right from
  // SubjectsFrom() on; the next call carries on from there. Returns how many events it indexed.
  Result<std::uint64_t> IndexUntaggedEvents(const TagsOf& tags_of,
                                            std::uint64_t batch = kIndexBatchEvents);
  static constexpr std::uint64_t kIndexBatchEvents = 100'000;

  // Calls fn for every stored (tag, seq, time_us) index row of an event from_seq..up_to_seq,
  // grouped by tag, each tag's rows in seq order (for `verify` to check the index against the
  // events it read: rows a running writer adds meanwhile, after them or below the SubjectsFrom()
  // it started with while indexing a schema-1 journal's events, are not its business).
  Status ForEachSubjectRow(std::uint64_t from_seq, std::uint64_t up_to_seq,
                           const std::function<Status(std::string_view tag, std::uint64_t seq,
                                                      std::int64_t time_us)>& fn) const;

  // Stores (or replaces) the snapshot of the state after event `seq` (1 <= seq <= LastSeq()).
  Status SaveSnapshot(std::uint64_t seq, std::string_view payload);

  // The newest snapshot with seq <= max_seq (0 = any) whose hash checks out against the event
  // chain. Snapshots that fail the check are skipped and described in *skipped (may be null).
  Result<std::optional<Snapshot>> LatestValidSnapshot(std::uint64_t max_seq,
                                                      std::vector<std::string>* skipped) const;

  // Deletes snapshots, keeping the newest `keep_newest` (>= 1) and, of the older ones, the oldest
  // in each span of `sparse_every` (>= 1) seqs (seq / sparse_every); returns how many were
  // deleted.
  Result<std::uint64_t> PruneSnapshots(std::uint64_t keep_newest,
                                       std::uint64_t sparse_every = kSparseSnapshotEvery);

  // Checks the whole journal from seq 1: contiguous seqs, every recomputed hash, every snapshot.
  // per_event (may be empty) is called for each event after its hash checked out; its failure
  // is reported with that seq. The first problem found is reported.
  VerifyReport Verify(const std::function<Status(const StoredEvent&)>& per_event) const;

  // Copies the -wal into the main file so the main file alone holds the history (a -wal lost
  // or not copied along then costs at most the newest events). PASSIVE: never waits for readers.
  // Also done after each snapshot (by the engine) and on close.
  Status Checkpoint();
  // Checkpoints when something was written since the last checkpoint and nothing for idle_for.
  Status CheckpointIfIdle(std::chrono::steady_clock::duration idle_for);

  // Re-hashes events from_seq+1..to_seq, chained from the stored hash of from_seq (0 = from
  // seq 1); DataLoss naming the first bad seq.
  Status CheckChain(std::uint64_t from_seq, std::uint64_t to_seq);
  // Writer: the seq from which Open re-hashed the chain to the end (its newest valid snapshot).
  std::uint64_t ChainCheckedFrom() const;
  // Something Open did that the caller should log (a new journal was created, an empty file was
  // made a journal, a read-only file was opened immutable), or "".
  const std::string& open_note() const;

  // Ok while the path still names the file this journal has open (SQLite's own check: the path
  // stat()ed, its inode compared). FailedPrecondition naming the path when the file was deleted or
  // another file was put in its place since Open: events appended then would land in a file no
  // later start reads, so Append refuses, serve turns not ready and `export --follow` exits 1.
  Status CheckStillAtPath() const;

  int SchemaVersion() const;
  const std::filesystem::path& path() const;
  OpenMode mode() const;

  // Caps the database size in pages on this connection (PRAGMA max_page_count), so tests can
  // make appends fail as on a full disk. Not for production use.
  Status SetMaxPageCountForTesting(std::uint64_t max_pages);

  struct Impl;

 private:
  explicit Journal(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Checks that `event` re-hashes to its stored hash, chained from `predecessor` (the stored hash
// of seq - 1): the check Journal::ForEachMatchingUnchecked leaves to its caller. DataLoss naming
// journal `journal_name` and the seq, as ForEachMatching words it, otherwise.
Status CheckEventLink(ChainHasher& hasher, const std::string& journal_name,
                      const StoredEvent& event, const Hash& predecessor);

}  // namespace gfp::store
