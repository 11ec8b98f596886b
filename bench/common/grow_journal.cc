#include "bench/common/grow_journal.h"

#include <string>
#include <utility>
#include <vector>

#include "bench/bench_report.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/decide.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "statemachine/snapshot_codec.h"
#include "store/journal.h"

namespace gfp::bench {
namespace {

namespace sm = gfp::sm;

// The state replayed from the journal, with everything needed to append to it as the engine
// would: batches, and snapshots every snapshot_every events pruned to snapshots_kept.
class Grower {
 public:
  Grower(const std::filesystem::path& path, const GrowOptions& options) : options_(options) {
    auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
    if (!journal.ok()) Die(journal.status().message());
    journal_ = std::move(journal).value();
    auto replayed = engine::Replay(*journal_, 0, true, false);
    if (!replayed.ok()) Die(replayed.status().message());
    state_ = std::move(replayed).value();
    seq_ = state_.last_seq;
    last_snapshot_ = seq_;
  }

  sm::State& state() { return state_; }
  std::uint64_t seq() const { return seq_; }

  sm::Decision Run(const sm::Command& c) {
    sm::Decision d = sm::Decide(state_, c);
    for (const auto& e : d.events) {
      sm::Apply(state_, ++seq_, e);
      chunk_.push_back(
          {e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e), sm::EventSubjects(e)});
    }
    if (chunk_.size() >= options_.batch) Flush();
    return d;
  }

  // Runs a command and feeds every effect's successful outcome back, as the saga runner does.
  sm::Decision Chain(const sm::Command& c, sm::Micros& now) {
    sm::Decision first = Run(c);
    std::vector<sm::Effect> effects = first.effects;
    for (std::size_t i = 0; i < effects.size(); ++i) {
      sm::Decision d = Run(sm::OutcomeOf(effects[i], ++now, events::FmResult()));
      effects.insert(effects.end(), d.effects.begin(), d.effects.end());
    }
    return first;
  }

  void Flush() {
    if (chunk_.empty()) return;
    auto r = journal_->Append(chunk_);
    if (!r.ok()) Die(r.status().message());
    chunk_.clear();
    if (seq_ - last_snapshot_ >= options_.snapshot_every) Snapshot();
  }

  void Snapshot() {
    if (Status s = journal_->SaveSnapshot(seq_, sm::EncodeSnapshot(state_)); !s.ok()) {
      Die(s.message());
    }
    if (Status s = journal_->Checkpoint(); !s.ok()) Die(s.message());
    auto pruned = journal_->PruneSnapshots(options_.snapshots_kept);
    if (!pruned.ok()) Die(pruned.status().message());
    last_snapshot_ = seq_;
  }

 private:
  GrowOptions options_;
  std::unique_ptr<store::Journal> journal_;
  sm::State state_;
  std::uint64_t seq_ = 0;
  std::uint64_t last_snapshot_ = 0;
  std::vector<store::NewEvent> chunk_;
};

std::vector<std::vector<std::string>> PartitionDevices(const sm::State& state) {
  std::vector<std::vector<std::string>> parts;
  for (const auto& [pid, p] : state.partitions) {
    auto devices = sm::DevicesOfPartition(state, p);
    if (devices.missing_reason.empty()) parts.push_back(devices.bdfs);
  }
  if (parts.empty() || state.devices.empty()) Die("the booted journal has no partitions");
  return parts;
}

}  // namespace

GrowResult GrowJournal(const std::filesystem::path& path, std::uint64_t events,
                       const GrowOptions& options) {
  Grower g(path, options);
  const std::vector<std::vector<std::string>> parts = PartitionDevices(g.state());
  const std::string resource = g.state().devices.begin()->second.resource;
  sm::Micros now = g.state().last_time;
  std::uint64_t rng = 42;
  GrowResult result;
  while (g.seq() < events) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    now += options.micros_per_cycle;
    sm::RequestAllocation request;
    request.now = ++now;
    request.resource = resource;
    request.device_ids = parts[static_cast<std::size_t>((rng >> 33) % parts.size())];
    const sm::Decision d = g.Chain(request, now);
    if (!d.refusal.empty()) Die("journal growth refused: " + d.refusal);
    sm::ObservePodResources pods;
    pods.now = ++now;
    pods.containers.push_back(
        {"default", "vm-" + d.allocation_id, "compute", resource, request.device_ids});
    g.Run(pods);
    sm::ReleaseAllocation release;
    release.now = ++now;
    release.allocation_id = d.allocation_id;
    release.detail = "devices absent from every pod for the release grace";
    g.Chain(release, now);
    ++result.cycles;
  }
  g.Flush();
  if (!g.state().active.empty() || !g.state().intents.empty()) {
    Die("journal growth left partitions");
  }
  // A snapshot at the end, as the engine writes every snapshot_every events.
  g.Snapshot();
  result.last_seq = g.seq();
  return result;
}

}  // namespace gfp::bench
