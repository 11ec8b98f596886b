// One seeded crash-and-fault run of `serve --mode=dra` (SPEC §11) against one DRA-mode
// ProcessWorld: the fake kubelet's DRA side, the fake API server, the stand-in scheduler and the
// simulated FM. The seed picks each round's operations:
//   new        schedule an fm-<N>gpu claim that fits and Prepare it;
//   repeat     Prepare a prepared claim again (same devices, no error), half the time after its
//              CDI specs were deleted (the repeat must write them again);
//   unprepare  delete the claim in the API server, free it in the scheduler, Unprepare it;
//   orphan     SIGKILL serve, delete a prepared claim meanwhile (kubelet forgets it), restart:
//              serve must unprepare it itself after --release-grace;
//   kill       SIGKILL serve idle, or inside a Prepare (the FM simulator ends serve at
//              fmActivateFabricPartition, before or after FM acts; or serve is killed while the
//              activation, a deactivation of an Unprepare, or the claim's GET is held, or at a
//              seeded instant 0-25 ms into a Prepare), restart;
//   api        500s, dropped connections, garbage or 403 on the claims' GETs for longer than the
//              grace, or slow answers, with a new claim prepared meanwhile;
//   wipe       kubelet deletes the node's ResourceSlice.
// After every restart kubelet repeats Prepare for every claim it holds and Unprepare for every
// claim it was unpreparing. Checked from outside (the journal read-only, FM's state and call log,
// the files, the API server), after every operation: no claim kubelet holds and the plugin
// answered prepared has lost its partition in FM (no successful deactivation of it since) or its
// CDI file; after each round, once kubelet's retries and the reconciliation settled: no intent,
// no claim unpreparing or waiting for files, the journal's claims exactly kubelet's, FM's active
// set the journal's (each partition owned by a held claim), no CDI file of another claim, and
// one slice. At the end every claim is unprepared, FM has nothing active, the journal verifies.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "sim/world/claim_scheduler.h"
#include "sim/world/process_world.h"

namespace gfp::crashtest {

// The simulated FM's names of the calls the run holds, kills inside and counts.
inline constexpr const char* kFmActivate = "fmActivateFabricPartition";
inline constexpr const char* kFmDeactivate = "fmDeactivateFabricPartition";

// Deterministic draws: std distributions differ between standard libraries.
struct Rng {
  std::mt19937_64 engine;
  std::uint64_t Below(std::uint64_t n) { return n ? engine() % n : 0; }
};

class DraCrashRun {
 public:
  DraCrashRun(std::uint64_t seed, const std::filesystem::path& dir);
  // gtest failures on any broken rule; stops at the first fatal one.
  void Run(std::uint64_t rounds);
  const std::vector<std::string>& trace() const { return trace_; }

 private:
  // A claim as kubelet holds it (in its checkpoint: Prepare sent, no Unprepare done).
  struct Held {
    nlohmann::json object;  // as the API server stored it
    kubelet::DraClaim ref;
    bool answered = false;  // the plugin answered it prepared
    std::vector<kubelet::DraDeviceAnswer> devices;
    std::size_t fm_calls_after = 0;  // FM's call log size once the plugin answered
  };

  void Round();
  void Operation();
  void RepeatPrepare();
  std::string NewClaim();  // its uid, empty when nothing fits
  bool PrepareHeld(const std::string& uid, const std::string& why);
  bool UnprepareClaim(const std::string& uid, const std::string& why);
  void Unprepare();
  void Orphan();
  void Kill();
  void KillInActivation();
  void KillAtRandomInstant();
  void KillWhileHeld(int variant);
  void ApiTrouble();
  void Wipe();
  void Restart();
  void Settle();
  Status Settled();
  void CheckHeld();
  void CheckFiles();
  void Drain();

  std::string PickHeld(bool answered_only);
  void StartUnprepare(const std::string& uid);  // kubelet's pod is gone: claim deleted, freed
  std::filesystem::path CdiFile(const std::string& uid) const;
  std::string SeeLog() const { return "; see " + world_->log_path().string(); }
  void Trace(std::string line) { trace_.push_back(std::move(line)); }

  Rng rng_;
  std::unique_ptr<simworld::ProcessWorld> world_;
  simworld::ClaimScheduler scheduler_;
  std::map<std::string, Held> held_;         // by uid
  std::map<std::string, Held> unpreparing_;  // Unprepare not yet answered without error
  std::vector<std::string> trace_;
  int next_claim_ = 0;
};

}  // namespace gfp::crashtest
