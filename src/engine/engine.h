// The journaled state machine: the journal on disk plus the state rebuilt from it, and the one
// way to change both — decide, journal (one durable transaction), then apply. Recovery on open
// is the newest valid snapshot plus the tail of the journal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/commands.h"
#include "statemachine/decide.h"
#include "statemachine/state.h"
#include "store/background_verifier.h"
#include "store/journal.h"

namespace gfp::engine {

#ifndef NDEBUG
inline constexpr bool kDebugBuild = true;
#else
inline constexpr bool kDebugBuild = false;
#endif

struct EngineOptions {
  // A snapshot is written after this many events since the previous one.
  std::uint64_t snapshot_every = 10'000;
  // Snapshots kept on disk (older ones are pruned).
  std::uint64_t snapshots_kept = 3;
  // Check the invariants after every Execute (on in Debug/ASan builds: a state machine bug then
  // fails loudly instead of being journaled on).
  bool check_invariants_after_execute = kDebugBuild;
  // Tests only: called on the state after each Execute applied its events, to stand in for a
  // state machine bug that breaks an invariant.
  std::function<void(sm::State&)> after_apply_for_testing = nullptr;
};

struct RecoveryReport {
  std::uint64_t snapshot_seq = 0;     // 0 when replayed from seq 1
  std::uint64_t events_replayed = 0;  // after the snapshot
  std::vector<std::string> skipped_snapshots;
  std::string journal_note;  // what opening the journal did worth logging (e.g. created it)
  double milliseconds = 0;
  // Events a schema-1 binary wrote, given their index rows at this open (once, after an upgrade).
  std::uint64_t events_indexed = 0;
  double index_milliseconds = 0;
  std::string index_error;  // why indexing stopped early ("" = it did not); the next open resumes
};

// Gives the events a schema-1 binary wrote (before journal->SubjectsFrom()) their index rows, with
// the tags sm::EventSubjects names (see store::Journal::IndexUntaggedEvents). Engine::Open does
// it once after an upgrade. Returns how many events it indexed.
Result<std::uint64_t> IndexSchema1Events(store::Journal& journal);

// Rebuilds the state from `journal` up to `to_seq` (0 = all). With `use_snapshots`, starts from
// the newest valid snapshot at or below to_seq. With `check_invariants`, checks them after every
// event and fails naming the seq. Undecodable events fail with DataLoss naming the seq. With
// `check_chain`, also checks contiguity and the hash chain of the events it reads (DataLoss
// naming the first bad seq; see Journal::ForEachVerified).
Result<sm::State> Replay(const store::Journal& journal, std::uint64_t to_seq, bool use_snapshots,
                         bool check_invariants, RecoveryReport* report = nullptr,
                         bool check_chain = false);

class Engine {
 public:
  // Opens the journal for writing and rebuilds the state from the newest valid snapshot plus
  // every event after it. Refuses (DataLoss naming the seq) damage in what the state is rebuilt
  // from: a broken chain from that snapshot on, an undecodable event, or an event after which the
  // state breaks an invariant. Damage only in older history does not stop it (see
  // store::BackgroundVerifier).
  static Result<std::unique_ptr<Engine>> Open(const std::filesystem::path& path,
                                              EngineOptions options = {});

  // Decides on `command`; when it yields events, journals them in one transaction and applies
  // them. If journaling fails the state is unchanged and the failure is returned. With
  // options.check_invariants_after_execute (Debug builds), a broken invariant afterwards returns
  // Internal naming the command and the seq, and is logged as an error (the events are already
  // journaled: it is a state machine bug, and the next start will refuse the journal). The
  // decision comes back without state_after: the engine adopted it as its state. `durability`
  // is the commit's (store::Durability): events that record an effect which itself would not
  // survive a power cut need not either.
  Result<sm::Decision> Execute(
      const sm::Command& command,
      store::Durability durability = store::Durability::kSurvivesPowerLoss);

  // Calls fn with the newest committed state. Never waits on the disk nor on the writer: each
  // Execute publishes a new immutable state after its durable append, and a reader holds the
  // lock only to take a reference to the published one, never while fn runs. So a reader sees
  // the state before a command until its events are journaled, then the state after it
  // (GetPreferredAllocation and ListAndWatch answer while an Allocate commits).
  template <typename Fn>
  auto Read(Fn&& fn) const {
    const std::shared_ptr<const sm::State> state = Published();
    return fn(*state);
  }
  sm::State CopyState() const;

  // store::Journal::CheckStillAtPath under the engine's lock (the serve loop asks every turn).
  // The first time it fails, the -wal is checkpointed into the file this process still holds,
  // so that file alone has the whole history for an operator to copy back.
  Status CheckJournalStillAtPath();

  const RecoveryReport& recovery() const { return recovery_; }
  store::Journal& journal() { return *journal_; }

  // Called with the duration of every durable append Execute makes (metrics); set it before
  // other threads execute. Empty: none.
  void SetAppendObserver(std::function<void(double seconds)> observer);

  // Writes a snapshot now (also done automatically every options.snapshot_every events).
  Status Snapshot();

  // Starts the full verification of the journal in the background (once; later calls do
  // nothing). Damage it finds in older history is logged and exposed, never fatal.
  void StartBackgroundVerification();
  // Stops it (waits for its thread); its result so far stays readable.
  void StopBackgroundVerification();
  // Null until started.
  const store::BackgroundVerifier* background_verification() const;

 private:
  Engine(std::unique_ptr<store::Journal> journal, sm::State state, EngineOptions options,
         RecoveryReport recovery);
  Status SnapshotLocked();
  // After the append: publishes Decide's scratch state (events applied with the journal's seqs)
  // as the state, or applies the events to it when there is none.
  Status AdoptDecidedState(const sm::Command& command, std::uint64_t first_seq,
                           sm::Decision& decision);
  // Makes `next` the state readers see (under state_mu_, a pointer swap); the old one is freed
  // by whoever lets go of it last, outside the lock.
  void Publish(sm::State next);
  // The state readers see, kept alive for as long as the caller holds it.
  std::shared_ptr<const sm::State> Published() const;
  // The writer's view of the state: only writers, under write_mu_, change it.
  const sm::State& state() const { return *state_; }
  // Logs and returns Internal("state machine bug: <command> <what> at journal seq N: detail").
  Status StateMachineBug(const sm::Command& command, const std::string& what,
                         const std::string& detail) const;

  // write_mu_ serialises everything that writes (Execute, snapshots, the journal checks) and is
  // held across the disk; state_mu_ guards the pointer state_ (and verifier_) and is held only to
  // copy or swap it, never while a state is read or built. A writer reads *state_ under write_mu_
  // alone: only writers replace it. A published state is never changed.
  mutable std::mutex write_mu_;
  mutable std::mutex state_mu_;
  std::unique_ptr<store::Journal> journal_;
  std::shared_ptr<const sm::State> state_;
  // The state published before state_, under write_mu_: see Publish.
  std::shared_ptr<const sm::State> retired_;
  EngineOptions options_;
  RecoveryReport recovery_;
  std::uint64_t last_snapshot_seq_ = 0;
  bool journal_moved_checkpointed_ = false;
  std::function<void(double seconds)> append_observer_;
  // Under state_mu_ (read by /readyz and /metrics, which must not wait on the disk). Declared
  // last: stopped (destroyed) before the journal it reads closes.
  std::unique_ptr<store::BackgroundVerifier> verifier_;
};

}  // namespace gfp::engine
