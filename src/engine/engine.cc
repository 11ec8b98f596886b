#include "engine/engine.h"

#include <chrono>

#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/invariants.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::engine {

Result<sm::State> Replay(const store::Journal& journal, std::uint64_t to_seq, bool use_snapshots,
                         bool check_invariants, RecoveryReport* report) {
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
  events::Event event;
  Status status =
      journal.ForEach(state.last_seq + 1, to_seq, [&](const store::StoredEvent& stored) -> Status {
        if (!event.ParseFromString(stored.payload) ||
            event.body_case() == events::Event::BODY_NOT_SET) {
          // Slow path only for errors: DecodeEvent words the reason.
          return sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload)
              .status()
              .WithContext("journal seq " + std::to_string(stored.seq));
        }
        sm::Apply(state, stored.seq, event);
        ++r.events_replayed;
        if (check_invariants) {
          GFP_RETURN_IF_ERROR(sm::CheckInvariants(state).WithContext(
              "invariant broken after journal seq " + std::to_string(stored.seq)));
        }
        return Status::Ok();
      });
  GFP_RETURN_IF_ERROR(status);
  r.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return state;
}

Result<std::unique_ptr<Engine>> Engine::Open(const std::filesystem::path& path,
                                             EngineOptions options) {
  GFP_ASSIGN_OR_RETURN(auto journal, store::Journal::Open(path, store::OpenMode::kReadWrite));
  RecoveryReport report;
  GFP_ASSIGN_OR_RETURN(sm::State state, Replay(*journal, 0, /*use_snapshots=*/true,
                                               /*check_invariants=*/false, &report));
  if (state.last_seq != journal->LastSeq()) {
    return DataLoss("journal " + path.string() + " ends at seq " +
                    std::to_string(journal->LastSeq()) + " but replay stopped at seq " +
                    std::to_string(state.last_seq));
  }
  auto invariants = sm::CheckInvariants(state);
  if (!invariants.ok()) {
    return invariants.WithContext("journal " + path.string() + " replays to an invalid state");
  }
  return std::unique_ptr<Engine>(
      new Engine(std::move(journal), std::move(state), options, std::move(report)));
}

Engine::Engine(std::unique_ptr<store::Journal> journal, sm::State state, EngineOptions options,
               RecoveryReport recovery)
    : journal_(std::move(journal)),
      state_(std::move(state)),
      options_(options),
      recovery_(std::move(recovery)),
      last_snapshot_seq_(recovery_.snapshot_seq) {}

Result<sm::Decision> Engine::Execute(const sm::Command& command) {
  std::lock_guard lock(mu_);
  sm::Decision decision = sm::Decide(state_, command);
  if (decision.events.empty()) return decision;
  std::vector<store::NewEvent> records;
  records.reserve(decision.events.size());
  for (const auto& event : decision.events) {
    records.push_back({event.time_unix_micros(), sm::EventTypeName(event), sm::EncodeEvent(event)});
  }
  GFP_ASSIGN_OR_RETURN(std::uint64_t first_seq, journal_->Append(records));
  for (std::size_t i = 0; i < decision.events.size(); ++i) {
    sm::Apply(state_, first_seq + i, decision.events[i]);
  }
  if (state_.last_seq - last_snapshot_seq_ >= options_.snapshot_every) {
    // A failed snapshot costs start-up time, not correctness: report, do not fail the command.
    SnapshotLocked().IgnoreError();
  }
  return decision;
}

sm::State Engine::CopyState() const {
  std::lock_guard lock(mu_);
  return state_;
}

Status Engine::Snapshot() {
  std::lock_guard lock(mu_);
  return SnapshotLocked();
}

Status Engine::SnapshotLocked() {
  if (state_.last_seq == 0 || state_.last_seq == last_snapshot_seq_) return Status::Ok();
  GFP_RETURN_IF_ERROR(journal_->SaveSnapshot(state_.last_seq, sm::EncodeSnapshot(state_)));
  last_snapshot_seq_ = state_.last_seq;
  auto pruned = journal_->PruneSnapshots(options_.snapshots_kept);
  return pruned.ok() ? Status::Ok() : pruned.status();
}

}  // namespace gfp::engine
