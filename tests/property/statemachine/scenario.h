// A random but reproducible life of a node: plugin commands, a model of Fabric Manager that
// carries out effects (sometimes failing, refusing overlaps like FM does), devices disappearing
// and coming back, module mapping changes, and plugin restarts, some of them in the middle of an
// allocation (after FM carried out a transition whose outcome was never journaled), followed by
// start-up recovery as PluginCore does it. The runner drives any Executor: the in-memory Driver
// (statemachine suite) or an Engine on a real SQLite journal (engine suite).
//
// Everything here returns failures as values (Status) and never touches gtest, so a property can
// fail with RC_FAIL and rapidcheck shrinks on the real failure.
#pragma once

#include <rapidcheck.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "common/sm_fixtures.h"
#include "common/status.h"
#include "statemachine/state_diff.h"

namespace gfp::testing {

// One step a scenario takes: a command plus how FM answers the effects it leads to.
struct Step {
  sm::Command command;
  std::vector<int> fm_codes;  // consumed in order by effects; 0 when exhausted
  std::string label;
  std::vector<int> args;  // indexes the runner resolves against the live state and the node
  // The plugin dies while carrying out effect number `crash_at` of this step (-1: never):
  // after FM carried it out when `crash_after_fm`, before otherwise. Its outcome is never
  // journaled; the plugin restarts and recovers.
  int crash_at = -1;
  bool crash_after_fm = false;
};

// How rapidcheck prints a step in a counterexample: label, request devices, indexes, FM codes,
// crash point.
void showValue(const Step& step, std::ostream& os);

// Generates a scenario for `node`.
rc::Gen<std::vector<Step>> GenScenario(const NodeFixture& node, bool fm_enabled);

// One of the three node fixtures (H100, B200, A100x16), chosen by `which`.
NodeFixture AnyNode(int which);

// What runs decisions and keeps the journal.
class Executor {
 public:
  virtual ~Executor() = default;
  // Decides, journals and applies `command`.
  virtual Result<sm::Decision> Execute(const sm::Command& command) = 0;
  // The live state (after the last Execute).
  virtual const sm::State& state() const = 0;
  // The process stops and starts again from what the journal holds; fails when the state rebuilt
  // from the journal differs from the live state it had.
  virtual Status Restart() = 0;
};

// How often each kind of thing happened in a scenario (for RC_CLASSIFY / RC_TAG).
struct ScenarioStats {
  int restarts = 0;
  int crashes_mid_saga = 0;
  int interrupted_outcomes = 0;  // recovered by ResolvePendingIntents
  int inventory_changes = 0;     // journaled
  int mapping_changes = 0;       // journaled
  int mapping_refusals = 0;      // refused: would move an in-use partition's GPUs
  int health_changes = 0;        // journaled
  int fm_lost = 0;               // FM dropped a partition behind the plugin's back
  int fm_extra = 0;              // FM activated one behind its back
  int grants = 0;
  int deactivations = 0;
  int drifts = 0;
  int rejections = 0;
  int claims_prepared = 0;    // ClaimPrepared journaled (first prepares and repairs)
  int claims_unprepared = 0;  // ClaimUnprepared journaled
  // Decisions whose scratch state was compared with the executor's applied state (none on the
  // engine, which returns decisions without it).
  int scratch_states_compared = 0;
};

// One word each for how a scenario restarted the plugin, changed the node, and changed FM behind
// the plugin's back: classifications that keep rapidcheck's summary short.
std::string RestartKind(const ScenarioStats& stats);
std::string NodeChangeKind(const ScenarioStats& stats);
std::string FabricChangeKind(const ScenarioStats& stats);

// Drives an Executor through a scenario, like PluginCore drives the engine.
class ScenarioRunner {
 public:
  ScenarioRunner(Executor& executor, NodeFixture node, bool fm_enabled);

  // Boots the plugin, then runs every step, then settles the DRA claims as kubelet's retries
  // would. Fails on the first executor error, broken invariant, anomaly, difference between
  // Decide's scratch state and the applied state, or anything left pending at the end.
  Status Run(const std::vector<Step>& steps);

  const ScenarioStats& stats() const { return stats_; }
  sm::Micros now() const { return now_; }
  // Partitions active in the modelled Fabric Manager.
  const std::set<sm::PartitionId>& fm_active() const { return fm_active_; }

 private:
  Status Execute(const sm::Command& command, sm::Decision* decision = nullptr);
  Status RunSaga(const sm::Command& command, const Step& step, bool* crashed);
  Status StartUp();
  Status SyncFabricManager();
  Status ExpectJournalMatchesFm() const;
  Status Restart();
  Status RunStep(Step step);
  Status ChangeInventory(int index);
  Status ChangeMapping(int a, int b);
  Status FinishClaimFiles(const sm::Command& command);
  Status SettleClaims();
  void Resolve(Step& step);
  events::FmResult CarryOut(const sm::Effect& effect, int code);
  bool OverlapsFmActive(sm::PartitionId pid) const;
  std::string LiveAllocation(const std::string& index) const;
  void Count(const std::vector<events::Event>& journaled);

  Executor& executor_;
  NodeFixture node_;
  bool fm_enabled_;
  sm::Micros now_ = 1'700'000'000'000'000;
  std::set<sm::PartitionId> fm_active_;
  std::vector<bool> present_;         // by module index: the device is on the node
  std::vector<std::string> mapping_;  // the mapping file: BDF of module i+1
  ScenarioStats stats_;
};

// Names the fields in which two states differ ("" when equal), for failure messages; under this
// name too for the suites that call it so.
using sm::StateDiff;

std::string FmName(int code);

}  // namespace gfp::testing
