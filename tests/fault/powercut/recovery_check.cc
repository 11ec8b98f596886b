#include "fault/powercut/recovery_check.h"

#include <set>

#include "common/fault_vfs.h"
#include "engine/engine.h"

namespace gfp::faulttest {
namespace {

std::string Ids(const std::set<std::uint32_t>& ids) {
  std::string out;
  for (auto id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return "{" + out + "}";
}

// Check 2: the acknowledged decisions and state are in the recovered journal.
std::string CheckAcknowledged(Workload& w, std::uint64_t recovered_tail, RecoveryOutcome* out) {
  for (const Acknowledged& a : w.acknowledged()) {
    ++out->decisions;
    if (a.seq > recovered_tail) ++out->lost;
  }
  if (out->lost > 0) {
    for (const Acknowledged& a : w.acknowledged()) {
      if (a.seq > recovered_tail) {
        return std::to_string(out->lost) + " acknowledged decision(s) lost: the journal was " +
               "recovered up to seq " + std::to_string(recovered_tail) + " but the " +
               KindName(a.kind) + " '" + a.what + "' (step " + std::to_string(a.step) +
               ") was answered at seq " + std::to_string(a.seq);
      }
    }
  }
  const sm::State& acked = w.acknowledged_state();
  if (acked.last_seq == 0) return "";
  if (acked.last_seq > recovered_tail) {
    return "the engine had applied events up to seq " + std::to_string(acked.last_seq) +
           " but only " + std::to_string(recovered_tail) + " were recovered";
  }
  auto& journal = w.world().core().engine().journal();
  auto replayed = engine::Replay(journal, acked.last_seq, false, true);
  if (!replayed.ok())
    return "replay to seq " + std::to_string(acked.last_seq) + ": " + replayed.status().message();
  if (!(*replayed == acked)) {
    return "replaying the recovered journal to seq " + std::to_string(acked.last_seq) +
           " does not give the state the engine had acknowledged at that seq";
  }
  return "";
}

// Checks 3 and 4.
std::string CheckJournal(Workload& w) {
  auto& engine = w.world().core().engine();
  const store::VerifyReport report = engine.journal().Verify(nullptr);
  if (!report.ok) {
    return "journal verify failed at seq " + std::to_string(report.first_bad_seq) + ": " +
           report.reason;
  }
  auto replayed = engine::Replay(engine.journal(), 0, false, true);
  if (!replayed.ok()) return "replay from seq 1: " + replayed.status().message();
  if (!(*replayed == engine.CopyState())) return "replay from seq 1 differs from the live state";
  return "";
}

// Check 5.
std::string CheckConverged(Workload& w) {
  auto& world = w.world();
  world.Advance(1'000'000);
  world.core().Reconcile(w.PodResources());
  const sm::State s = world.core().engine().CopyState();
  if (!s.intents.empty()) {
    return std::to_string(s.intents.size()) + " intent(s) still open after restart and reconcile";
  }
  auto fm_active = world.fm().ActivePartitions();
  if (!fm_active.ok()) return "FM ActivePartitions: " + fm_active.status().message();
  const std::set<std::uint32_t> fm(fm_active->begin(), fm_active->end());
  std::set<std::uint32_t> journal;
  for (const auto& [id, a] : s.active) journal.insert(id);
  if (fm != journal) {
    return "after restart and reconcile FM has " + Ids(fm) + " active and the journal " +
           Ids(journal);
  }
  return "";
}

// The node goes down and comes back: the plugin dropped without shutdown, the page cache gone.
std::string PowerOff(simworld::DeterministicWorld& world) {
  world.CrashPlugin();
  if (int open = testing::fault::ResetFaultVfs(); open != 0) {
    return std::to_string(open) + " SQLite file(s) still open after the plugin was dropped";
  }
  return "";
}

}  // namespace

RecoveryOutcome RebootAndCheck(Workload& w, const Reboot& reboot) {
  RecoveryOutcome out;
  auto& world = w.world();
  if (out.failure = PowerOff(world); !out.failure.empty()) return out;
  if (reboot.fm_loses_partitions) world.fm().Restart(false).IgnoreError();
  if (reboot.second_cut != 0) {
    testing::fault::ArmPowerCut(reboot.second_cut, reboot.mode, reboot.second_cut * 104729);
    const Status first = world.StartPlugin();
    testing::fault::DisarmPowerCut();
    out.second_cut_hit = testing::fault::PoweredOff();
    if (!out.second_cut_hit && !first.ok()) {
      out.failure = "the plugin does not start again: " + first.message();
      return out;
    }
    if (out.second_cut_hit) {
      if (out.failure = PowerOff(world); !out.failure.empty()) return out;
    }
  }
  if (world.plugin_up()) {
    // Recovered already (no second cut happened): nothing more to start.
  } else if (Status started = world.StartPlugin(); !started.ok()) {
    out.failure = "the plugin does not start again: " + started.message();
    return out;
  }
  const auto& recovery = world.core().engine().recovery();
  const std::uint64_t tail = recovery.snapshot_seq + recovery.events_replayed;
  out.failure = CheckAcknowledged(w, tail, &out);
  if (out.failure.empty()) out.failure = CheckJournal(w);
  if (out.failure.empty()) out.failure = CheckConverged(w);
  return out;
}

}  // namespace gfp::faulttest
