#include "engine/engine.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/text_escape.h"
#include "engine/decoded_read.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "statemachine/invariants.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::engine {

Result<sm::State> Replay(const store::Journal& journal, std::uint64_t to_seq, bool use_snapshots,
                         bool check_invariants, RecoveryReport* report, bool check_chain) {
  const auto started = std::chrono::steady_clock::now();
  RecoveryReport local;
  RecoveryReport& r = report ? *report : local;
  sm::State state;
  if (use_snapshots) {
    GFP_ASSIGN_OR_RETURN(auto snapshot, journal.LatestValidSnapshot(to_seq, &r.skipped_snapshots));
    if (snapshot) {
      auto decoded = sm::DecodeSnapshot(snapshot->payload);
      if (decoded.ok() && decoded->last_seq == snapshot->seq) {
        state = std::move(decoded).value();
        r.snapshot_seq = snapshot->seq;
      } else {
        r.skipped_snapshots.push_back("snapshot at seq " + std::to_string(snapshot->seq) + ": " +
                                      (decoded.ok()
                                           ? "covers seq " + std::to_string(decoded->last_seq)
                                           : decoded.status().message()));
      }
    }
  }
  // A snapshot taken at to_seq itself leaves no tail to read.
  if (to_seq != 0 && state.last_seq >= to_seq) return state;
  const auto replay_one = [&](const store::StoredEvent& stored,
                              const events::Event& event) -> Status {
    sm::Apply(state, stored.seq, event);
    ++r.events_replayed;
    if (check_invariants) {
      if (Status broken = sm::CheckInvariants(state); !broken.ok()) {
        // The events are what is wrong here (the state machine is trusted): data loss.
        return DataLoss("invariant broken after journal seq " + std::to_string(stored.seq) + " (" +
                        stored.type + "): " + broken.message());
      }
    }
    return Status::Ok();
  };
  GFP_RETURN_IF_ERROR(ForEachDecoded(journal, state.last_seq + 1, to_seq, check_chain, replay_one));
  r.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return state;
}

Result<std::uint64_t> IndexSchema1Events(store::Journal& journal) {
  return journal.IndexUntaggedEvents(
      [](std::string_view type, std::int64_t time,
         std::string_view payload) -> Result<std::vector<std::string>> {
        GFP_ASSIGN_OR_RETURN(events::Event event,
                             sm::DecodeEvent(std::string(type), time, std::string(payload)));
        return sm::EventSubjects(event);
      });
}

namespace {

// Damage in the old events does not stop the start: the part not indexed is still scanned by
// `journal history`, and the next start tries again.
void IndexAfterUpgrade(store::Journal& journal, RecoveryReport& report) {
  const auto started = std::chrono::steady_clock::now();
  const auto from_before = journal.SubjectsFrom();
  const auto indexed = IndexSchema1Events(journal);
  if (!indexed.ok()) report.index_error = indexed.status().message();
  // Counted from where the index starts, so a run that stopped early still says what it did.
  const auto from_after = journal.SubjectsFrom();
  if (from_before.ok() && from_after.ok() && *from_after < *from_before) {
    report.events_indexed = *from_before - *from_after;
  }
  report.index_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::Open(const std::filesystem::path& path,
                                             EngineOptions options) {
  GFP_ASSIGN_OR_RETURN(auto journal, store::Journal::Open(path, store::OpenMode::kReadWrite));
  RecoveryReport report;
  report.journal_note = journal->open_note();
  auto replayed = Replay(*journal, 0, /*use_snapshots=*/true, /*check_invariants=*/true, &report);
  // The journal re-hashed the chain from its newest valid snapshot; when replay had to start
  // from an older one (the newest did not decode), the events in between are checked too.
  if (report.snapshot_seq < journal->ChainCheckedFrom()) {
    GFP_RETURN_IF_ERROR(journal->CheckChain(report.snapshot_seq, journal->ChainCheckedFrom()));
  }
  if (!replayed.ok()) {
    return replayed.status().WithContext("journal " + path.string() + " cannot be replayed");
  }
  sm::State state = std::move(replayed).value();
  if (state.last_seq != journal->LastSeq()) {
    return DataLoss("journal " + path.string() + " ends at seq " +
                    std::to_string(journal->LastSeq()) + " but replay stopped at seq " +
                    std::to_string(state.last_seq));
  }
  // Also covers a snapshot with no events after it.
  if (Status broken = sm::CheckInvariants(state); !broken.ok()) {
    return DataLoss("journal " + path.string() + " replays to an invalid state at seq " +
                    std::to_string(state.last_seq) + ": " + broken.message());
  }
  IndexAfterUpgrade(*journal, report);
  return std::unique_ptr<Engine>(
      new Engine(std::move(journal), std::move(state), std::move(options), std::move(report)));
}

Engine::Engine(std::unique_ptr<store::Journal> journal, sm::State state, EngineOptions options,
               RecoveryReport recovery)
    : journal_(std::move(journal)),
      state_(std::make_shared<const sm::State>(std::move(state))),
      options_(std::move(options)),
      recovery_(std::move(recovery)),
      last_snapshot_seq_(recovery_.snapshot_seq) {}

Result<sm::Decision> Engine::Execute(const sm::Command& command, store::Durability durability) {
  std::lock_guard lock(write_mu_);
  sm::Decision decision = sm::Decide(state(), command);
  if (decision.events.empty()) return decision;
  std::vector<store::NewEvent> records;
  records.reserve(decision.events.size());
  for (const auto& event : decision.events) {
    records.push_back({event.time_unix_micros(), sm::EventTypeName(event), sm::EncodeEvent(event),
                       sm::EventSubjects(event)});
  }
  const auto append_started = std::chrono::steady_clock::now();
  GFP_ASSIGN_OR_RETURN(std::uint64_t first_seq, journal_->Append(records, durability));
  if (append_observer_) {
    append_observer_(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - append_started).count());
  }
  GFP_RETURN_IF_ERROR(AdoptDecidedState(command, first_seq, decision));
  if (options_.after_apply_for_testing) {
    sm::State sabotaged = state();
    options_.after_apply_for_testing(sabotaged);
    Publish(std::move(sabotaged));
  }
  if (options_.check_invariants_after_execute) {
    if (Status broken = sm::CheckInvariants(state()); !broken.ok()) {
      return StateMachineBug(command, "broke an invariant", broken.message());
    }
  }
  if (state().last_seq - last_snapshot_seq_ >= options_.snapshot_every) {
    // A failed snapshot costs start-up time, not correctness: report, do not fail the command.
    SnapshotLocked().IgnoreError();
  }
  return decision;
}

Status Engine::AdoptDecidedState(const sm::Command& command, std::uint64_t first_seq,
                                 sm::Decision& decision) {
  const std::uint64_t last_seq = first_seq + decision.events.size() - 1;
  // Decide applied its events to its scratch state with the seqs that follow state_'s, which are
  // the seqs the journal gave them: that state is the new one, without applying them again.
  if (!decision.state_after || decision.state_after->last_seq != last_seq) {
    sm::State applied = state();  // a published state is never changed: apply to a copy
    for (std::size_t i = 0; i < decision.events.size(); ++i) {
      sm::Apply(applied, first_seq + i, decision.events[i]);
    }
    Publish(std::move(applied));
    decision.state_after.reset();
    return Status::Ok();
  }
  if (options_.check_invariants_after_execute) {
    // Debug builds: the scratch state must be exactly what replay will rebuild.
    sm::State applied = state();
    for (std::size_t i = 0; i < decision.events.size(); ++i) {
      sm::Apply(applied, first_seq + i, decision.events[i]);
    }
    if (!(applied == *decision.state_after)) {
      Publish(std::move(applied));
      return StateMachineBug(command, "decided a state that replay does not rebuild", "");
    }
  }
  Publish(std::move(*decision.state_after));
  decision.state_after.reset();
  return Status::Ok();
}

Status Engine::StateMachineBug(const sm::Command& command, const std::string& what,
                               const std::string& detail) const {
  Status bug = Internal("state machine bug: " + std::string(sm::CommandName(command)) + " " + what +
                        " at journal seq " + std::to_string(state().last_seq) +
                        (detail.empty() ? "" : ": " + detail));
  spdlog::error("{}", EscapeControl(bug.message()));
  return bug;
}

void Engine::Publish(sm::State next) {
  std::shared_ptr<const sm::State> published = std::make_shared<const sm::State>(std::move(next));
  {
    std::lock_guard publish(state_mu_);
    state_.swap(published);
  }
  // `published` now holds the previous state. A reader may have taken it just before the swap;
  // kept until the next Publish, it is freed here rather than on that reader's call (freeing a
  // state costs a reader more than its whole answer). The one before it is freed now, outside
  // the lock; a reader still holding that one frees it itself.
  retired_.swap(published);
}

std::shared_ptr<const sm::State> Engine::Published() const {
  std::lock_guard lock(state_mu_);
  return state_;
}

void Engine::SetAppendObserver(std::function<void(double seconds)> observer) {
  std::lock_guard lock(write_mu_);
  append_observer_ = std::move(observer);
}

Status Engine::CheckJournalStillAtPath() {
  std::lock_guard lock(write_mu_);
  Status status = journal_->CheckStillAtPath();
  if (!status.ok() && !journal_moved_checkpointed_) {
    journal_moved_checkpointed_ = true;
    const Status checkpoint = journal_->Checkpoint();
    if (!checkpoint.ok()) spdlog::warn("{}", checkpoint.message());
  }
  return status;
}

sm::State Engine::CopyState() const { return *Published(); }

Status Engine::Snapshot() {
  std::lock_guard lock(write_mu_);
  return SnapshotLocked();
}

void Engine::StartBackgroundVerification() {
  std::lock_guard lock(state_mu_);
  if (!verifier_) verifier_ = store::BackgroundVerifier::Start(journal_->path());
}

void Engine::StopBackgroundVerification() {
  store::BackgroundVerifier* verifier = nullptr;
  {
    std::lock_guard lock(state_mu_);
    verifier = verifier_.get();
  }
  if (verifier != nullptr) verifier->Stop();  // outside the lock: Stop waits for the thread
}

const store::BackgroundVerifier* Engine::background_verification() const {
  std::lock_guard lock(state_mu_);
  return verifier_.get();
}

Status Engine::SnapshotLocked() {
  const sm::State& s = state();
  if (s.last_seq == 0 || s.last_seq == last_snapshot_seq_) return Status::Ok();
  GFP_RETURN_IF_ERROR(journal_->SaveSnapshot(s.last_seq, sm::EncodeSnapshot(s)));
  last_snapshot_seq_ = s.last_seq;
  // The main file then holds everything up to the snapshot, not only the -wal.
  GFP_RETURN_IF_ERROR(journal_->Checkpoint());
  auto pruned = journal_->PruneSnapshots(options_.snapshots_kept);
  return pruned.ok() ? Status::Ok() : pruned.status();
}

}  // namespace gfp::engine
