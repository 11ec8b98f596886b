#include "scenario.h"

#include <algorithm>

#include "statemachine/claims.h"
#include "statemachine/recovery.h"

namespace gfp::testing {
namespace {

constexpr sm::Micros kStep = 1'000'000;
constexpr const char* kFmAddress = "/run/nvidia-fabricmanager/fmpm.sock";

rc::Gen<std::vector<int>> GenFmCodes() {
  // Mostly success; sometimes a failure FM documents. FM_ST_UNINITIALIZED and FM_ST_IN_USE also
  // come from the model itself (deactivating an inactive partition, activating over another).
  return rc::gen::container<std::vector<int>>(
      3, rc::gen::weightedElement<int>({{20, 0}, {1, -7}, {1, -9}, {1, -10}, {1, -2}}));
}

rc::Gen<std::vector<std::string>> GenDevices(const NodeFixture& node) {
  // Mostly a whole partition (the common, aligned case), otherwise any subset.
  auto aligned = rc::gen::map(rc::gen::elementOf(node.partitions), [node](const auto& p) {
    std::vector<std::string> ids;
    for (auto m : p.second) ids.push_back(node.bdfs_by_module[m - 1]);
    return ids;
  });
  auto any = rc::gen::map(rc::gen::container<std::vector<std::size_t>>(
                              rc::gen::inRange<std::size_t>(0, node.bdfs_by_module.size())),
                          [node](const std::vector<std::size_t>& idx) {
                            std::vector<std::string> ids;
                            for (auto i : idx) ids.push_back(node.bdfs_by_module[i]);
                            return ids;
                          });
  return rc::gen::weightedOneOf<std::vector<std::string>>({{3, aligned}, {1, any}});
}

// Steps that call FM sometimes crash the plugin in the middle (see Step::crash_at).
rc::Gen<Step> MayCrash(rc::Gen<Step> step) {
  auto crash = rc::gen::weightedOneOf<std::pair<int, bool>>(
      {{6, rc::gen::just(std::pair<int, bool>(-1, false))},
       {1, rc::gen::pair(rc::gen::inRange(0, 3), rc::gen::arbitrary<bool>())}});
  return rc::gen::map(rc::gen::pair(std::move(step), crash), [](auto p) {
    p.first.crash_at = p.second.first;
    p.first.crash_after_fm = p.second.second;
    if (p.first.crash_at >= 0) p.first.label += "+crash";
    return p.first;
  });
}

Step Make(sm::Command command, std::vector<int> codes, std::string label, std::vector<int> args) {
  Step s;
  s.command = std::move(command);
  s.fm_codes = std::move(codes);
  s.label = std::move(label);
  s.args = std::move(args);
  return s;
}

}  // namespace

std::string FmName(int code) {
  switch (code) {
    case 0:
      return "FM_ST_SUCCESS";
    case -2:
      return "FM_ST_GENERIC_ERROR";
    case -4:
      return "FM_ST_UNINITIALIZED";
    case -7:
      return "FM_ST_IN_USE";
    case -9:
      return "FM_ST_CONNECTION_NOT_VALID";
    case -10:
      return "FM_ST_NVLINK_ERROR";
    default:
      return "FM_ST_UNKNOWN";
  }
}

void showValue(const Step& step, std::ostream& os) {
  os << step.label;
  if (const auto* r = std::get_if<sm::RequestAllocation>(&step.command)) {
    os << " [";
    for (std::size_t i = 0; i < r->device_ids.size(); ++i) os << (i ? " " : "") << r->device_ids[i];
    os << "]";
  }
  if (const auto* o = std::get_if<sm::ReleaseOrphanPartition>(&step.command)) {
    os << " partition " << o->partition_id;
  }
  if (const auto* h = std::get_if<sm::ObserveDeviceHealth>(&step.command)) {
    os << (h->healthy ? " healthy" : " unhealthy");
  }
  if (const auto* c = std::get_if<sm::ObserveFabricManagerConnection>(&step.command)) {
    os << (c->connected ? " up" : " down");
  }
  if (!step.args.empty()) {
    os << " args";
    for (int a : step.args) os << " " << a;
  }
  if (!step.fm_codes.empty()) {
    os << " fm";
    for (int c : step.fm_codes) os << " " << c;
  }
  if (step.crash_at >= 0) {
    os << " crash at effect " << step.crash_at
       << (step.crash_after_fm ? " after FM" : " before FM");
  }
}

namespace {

using rc::gen::inRange;
using rc::gen::pair;

// What kubelet and the pods do. Commands other than requests refer to whatever is live when they
// run: they carry indexes (args) the runner resolves against the state, so shrinking keeps
// scenarios meaningful.
rc::Gen<Step> GenKubeletStep(const NodeFixture& node) {
  const std::string resource = node.resource;
  auto request = rc::gen::map(pair(GenDevices(node), GenFmCodes()), [resource](auto p) {
    sm::RequestAllocation r;
    r.resource = resource;
    r.device_ids = p.first;
    return Make(r, p.second, "request", {});
  });
  auto release = rc::gen::map(pair(inRange(0, 8), GenFmCodes()), [](auto p) {
    return Make(sm::ReleaseAllocation{}, p.second, "release", {p.first});
  });
  auto pods = rc::gen::map(inRange(0, 8),
                           [](int i) { return Make(sm::ObservePodResources{}, {}, "pods", {i}); });
  auto ensure = rc::gen::map(pair(inRange(0, 8), GenFmCodes()), [](auto p) {
    return Make(sm::EnsurePartitionActive{}, p.second, "prestart", {p.first});
  });
  auto kubelet =
      rc::gen::just(Make(sm::ObserveKubeletRestart{0, "socket removed"}, {}, "kubelet", {}));
  return rc::gen::weightedOneOf<Step>({{10, MayCrash(request)},
                                       {4, MayCrash(release)},
                                       {3, pods},
                                       {2, MayCrash(ensure)},
                                       {1, kubelet}});
}

// What a DRA kubelet plugin is asked (SPEC §11): prepare a claim (one of a few uids, so the same
// claim is prepared again, with its files present or lost) or unprepare one. args: {uid index,
// files present}.
rc::Gen<Step> GenClaimStep(const NodeFixture& node) {
  auto prepare = rc::gen::map(
      rc::gen::tuple(GenDevices(node), inRange(0, 6),
                     rc::gen::weightedElement<int>({{4, 1}, {1, 0}}), GenFmCodes()),
      [](auto t) {
        sm::PrepareClaim c;
        const auto& gpus = std::get<0>(t);
        for (std::size_t i = 0; i < gpus.size(); ++i) {
          auto& d = c.devices.emplace_back();
          d.set_request("gpu" + std::to_string(i));
          d.set_bdf(gpus[i]);
        }
        return Make(c, std::get<3>(t), "claim-prepare", {std::get<1>(t), std::get<2>(t)});
      });
  auto unprepare = rc::gen::map(pair(inRange(0, 6), GenFmCodes()), [](auto p) {
    return Make(sm::UnprepareClaim{}, p.second, "claim-unprepare", {p.first});
  });
  return rc::gen::weightedOneOf<Step>({{3, MayCrash(prepare)}, {2, MayCrash(unprepare)}});
}

// What Fabric Manager does, and the plugin's FM chores.
rc::Gen<Step> GenFabricStep() {
  // FM loses a partition (args[0] < 8: which), activates one behind the plugin's back (args[1]
  // indexes the node's table), then the plugin observes FM's state.
  auto fabric = rc::gen::map(
      pair(rc::gen::container<std::vector<int>>(4, inRange(0, 40)), GenFmCodes()),
      [](auto p) { return Make(sm::ObserveFabricState{}, p.second, "fabric-state", p.first); });
  auto orphan = rc::gen::map(pair(inRange(0, 40), GenFmCodes()), [](auto p) {
    sm::ReleaseOrphanPartition o;
    o.partition_id = static_cast<std::uint32_t>(p.first);
    o.reason = "orphan";
    return Make(o, p.second, "orphan", {});
  });
  auto resync = rc::gen::map(GenFmCodes(), [](auto codes) {
    return Make(sm::ResyncFabricManager{}, codes, "resync", {});
  });
  auto connection = rc::gen::map(rc::gen::arbitrary<bool>(), [](bool up) {
    sm::ObserveFabricManagerConnection c;
    c.connected = up;
    c.address = kFmAddress;
    c.reason = "lost";
    return Make(c, {}, up ? "fm-up" : "fm-down", {});
  });
  return rc::gen::weightedOneOf<Step>(
      {{3, MayCrash(fabric)}, {2, MayCrash(orphan)}, {1, resync}, {1, connection}});
}

// What happens to the node: health, devices, the mapping file, the plugin process.
rc::Gen<Step> GenNodeStep() {
  auto health = rc::gen::map(pair(inRange(0, 16), rc::gen::arbitrary<bool>()), [](auto p) {
    sm::ObserveDeviceHealth h;
    h.healthy = p.second;
    h.reason = "vfio group node changed";
    return Make(h, {}, "health", {p.first});
  });
  // A device disappears (args[0] < 16: which; again: it comes back) or all come back.
  auto inventory = rc::gen::map(
      inRange(0, 20), [](int i) { return Make(sm::ObserveInventory{}, {}, "inventory", {i}); });
  // The mapping file changes: two modules swap BDFs, or (equal indexes) it is restored.
  auto mapping = rc::gen::map(rc::gen::container<std::vector<int>>(2, inRange(0, 16)), [](auto v) {
    return Make(sm::ObserveModuleMapping{}, {}, "mapping", v);
  });
  auto restart = rc::gen::just(Make(sm::StartPlugin{}, {}, "plugin-restart", {}));
  return rc::gen::weightedOneOf<Step>({{2, health}, {2, inventory}, {1, mapping}, {1, restart}});
}

}  // namespace

rc::Gen<std::vector<Step>> GenScenario(const NodeFixture& node, bool fm_enabled) {
  (void)fm_enabled;  // the runner skips FM-only steps when FM is not managed
  // Up to 3 x size steps (300 by default): long enough for snapshots, restarts and crashes to
  // meet allocations in every state, short enough for the whole suite to run in seconds.
  return rc::gen::scale(3.0, rc::gen::container<std::vector<Step>>(
                                 rc::gen::weightedOneOf<Step>({{20, GenKubeletStep(node)},
                                                               {7, GenFabricStep()},
                                                               {6, GenNodeStep()},
                                                               {8, GenClaimStep(node)}})));
}

ScenarioRunner::ScenarioRunner(Executor& executor, NodeFixture node, bool fm_enabled)
    : executor_(executor),
      node_(std::move(node)),
      fm_enabled_(fm_enabled),
      present_(node_.bdfs_by_module.size(), true),
      mapping_(node_.bdfs_by_module) {}

void ScenarioRunner::Count(const std::vector<events::Event>& journaled) {
  for (const auto& e : journaled) {
    stats_.grants += e.has_allocation_granted();
    stats_.deactivations += e.has_partition_deactivated();
    stats_.drifts += e.has_drift_detected();
    stats_.rejections += e.has_allocation_rejected();
    stats_.inventory_changes += e.has_inventory_observed();
    stats_.mapping_changes += e.has_module_mapping_loaded();
    stats_.health_changes += e.has_device_health_changed();
    stats_.claims_prepared += e.has_claim_prepared();
    stats_.claims_unprepared += e.has_claim_unprepared();
  }
}

Status ScenarioRunner::Execute(const sm::Command& command, sm::Decision* out) {
  GFP_ASSIGN_OR_RETURN(sm::Decision decision, executor_.Execute(command));
  const sm::State& applied = executor_.state();
  // The engine adopts Decide's scratch state and returns it unset (its suite compares the live
  // state with its SQLite file); an executor that applies the events itself must end where
  // Decide did.
  if (decision.state_after && !(*decision.state_after == applied)) {
    return Internal("Decide's scratch state differs from the state after applying its " +
                    std::to_string(decision.events.size()) +
                    " events: " + StateDiff(applied, *decision.state_after));
  }
  stats_.scratch_states_compared += decision.state_after.has_value();
  GFP_RETURN_IF_ERROR(sm::CheckInvariants(applied).WithContext("invariant broken"));
  if (applied.anomaly_count != 0) {
    return Internal("anomaly journaled: " + applied.recent_anomalies.back().description);
  }
  Count(decision.events);
  if (out) *out = std::move(decision);
  return Status::Ok();
}

bool ScenarioRunner::OverlapsFmActive(sm::PartitionId pid) const {
  std::set<sm::ModuleId> used;
  for (const auto& [id, modules] : node_.partitions) {
    if (fm_active_.count(id)) used.insert(modules.begin(), modules.end());
  }
  for (const auto& [id, modules] : node_.partitions) {
    if (id != pid) continue;
    for (auto m : modules) {
      if (used.count(m)) return true;
    }
  }
  return false;
}

// The modelled FM: `code` is what a failing FM answers; on success it behaves like FM does.
events::FmResult ScenarioRunner::CarryOut(const sm::Effect& effect, int code) {
  if (!fm_enabled_) return FmError(-3, "FM_ST_NOT_SUPPORTED");
  if (code != 0) return FmError(code, FmName(code));
  switch (effect.kind) {
    case sm::Effect::Kind::kActivatePartition:
      if (fm_active_.count(effect.partition_id) || OverlapsFmActive(effect.partition_id)) {
        return FmError(-7, FmName(-7));
      }
      fm_active_.insert(effect.partition_id);
      return FmOk();
    case sm::Effect::Kind::kDeactivatePartition:
      if (!fm_active_.erase(effect.partition_id)) return FmError(-4, FmName(-4));
      return FmOk();
    case sm::Effect::Kind::kSetActivatedPartitions:
      fm_active_ = {effect.partition_ids.begin(), effect.partition_ids.end()};
      return FmOk();
  }
  return FmOk();
}

// Runs a command and every effect it leads to, feeding outcomes back (PluginCore::RunSaga).
Status ScenarioRunner::RunSaga(const sm::Command& command, const Step& step, bool* crashed) {
  sm::Decision decision;
  GFP_RETURN_IF_ERROR(Execute(command, &decision));
  std::vector<sm::Effect> effects = decision.effects;
  std::size_t next_code = 0;
  for (std::size_t i = 0; i < effects.size(); ++i) {
    const sm::Effect effect = effects[i];
    now_ += 1000;
    if (static_cast<int>(i) == step.crash_at) {
      if (step.crash_after_fm) CarryOut(effect, 0);
      if (crashed) *crashed = true;
      return Status::Ok();
    }
    const int code = next_code < step.fm_codes.size() ? step.fm_codes[next_code++] : 0;
    const events::FmResult outcome = CarryOut(effect, code);
    GFP_RETURN_IF_ERROR(Execute(sm::OutcomeOf(effect, now_, outcome), &decision));
    effects.insert(effects.end(), decision.effects.begin(), decision.effects.end());
  }
  return Status::Ok();
}

// After the plugin observed FM's state (and repaired what it could), the journal's active set is
// FM's: drift is journaled and adopted, and a repair FM refused is not active on either side.
Status ScenarioRunner::ExpectJournalMatchesFm() const {
  std::set<sm::PartitionId> journal_active;
  for (const auto& [pid, active] : executor_.state().active) journal_active.insert(pid);
  if (journal_active == fm_active_) return Status::Ok();
  auto list = [](const std::set<sm::PartitionId>& ids) {
    std::string out;
    for (auto id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
    return "{" + out + "}";
  };
  return Internal("the journal has partitions " + list(journal_active) + " active, FM has " +
                  list(fm_active_));
}

// FM connection, recovery of intents left without an outcome, abandoned requests, then FM's
// state (PluginCore::SyncFabricManagerOnce).
Status ScenarioRunner::SyncFabricManager() {
  sm::ObserveFabricManagerConnection up;
  up.now = now_;
  up.connected = true;
  up.address = kFmAddress;
  up.connect_params_version = 2;
  GFP_RETURN_IF_ERROR(Execute(up));
  for (const auto& outcome : sm::ResolvePendingIntents(executor_.state(), fm_active_, now_)) {
    ++stats_.interrupted_outcomes;
    GFP_RETURN_IF_ERROR(RunSaga(outcome, Step{}, nullptr).WithContext("resolving an intent"));
  }
  GFP_RETURN_IF_ERROR(Execute(sm::AbandonInterruptedRequests{now_}));
  sm::ObserveFabricState observed;
  observed.now = now_;
  observed.partitions = PartitionsOf(node_, fm_active_);
  GFP_RETURN_IF_ERROR(RunSaga(observed, Step{}, nullptr));
  return ExpectJournalMatchesFm().WithContext("after start-up recovery");
}

// PluginCore::Start, then the first FM sync.
Status ScenarioRunner::StartUp() {
  now_ += kStep;
  sm::StartPlugin start;
  start.now = now_;
  start.version = "test";
  start.fabric_manager_enabled = fm_enabled_;
  GFP_RETURN_IF_ERROR(Execute(start));
  sm::ObserveInventory inventory = InventoryOf(node_, now_);
  std::erase_if(inventory.devices, [&](const events::Device& d) {
    auto at = std::find(node_.bdfs_by_module.begin(), node_.bdfs_by_module.end(), d.bdf());
    return !present_[static_cast<std::size_t>(at - node_.bdfs_by_module.begin())];
  });
  GFP_RETURN_IF_ERROR(Execute(inventory));
  if (!fm_enabled_) return Status::Ok();
  NodeFixture mapped = node_;
  mapped.bdfs_by_module = mapping_;
  sm::Decision decision;
  GFP_RETURN_IF_ERROR(Execute(MappingOf(mapped, now_), &decision));
  if (!decision.refusal.empty()) return Internal("start-up refused: " + decision.refusal);
  GFP_RETURN_IF_ERROR(SyncFabricManager());
  // What start-up recovery promises: nothing left pending, no request left waiting.
  for (const auto& [pid, intent] : executor_.state().intents) {
    return Internal("after start-up recovery partition " + std::to_string(pid) +
                    " still has a pending " + sm::IntentKindName(intent.kind));
  }
  for (const auto& [id, allocation] : executor_.state().allocations) {
    if (allocation.status == sm::AllocationStatus::kRequested) {
      return Internal("after start-up recovery " + id + " is still requested");
    }
  }
  return Status::Ok();
}

Status ScenarioRunner::Restart() {
  ++stats_.restarts;
  GFP_RETURN_IF_ERROR(executor_.Restart().WithContext("restarting the plugin"));
  return StartUp().WithContext("starting up again");
}

std::string ScenarioRunner::LiveAllocation(const std::string& index) const {
  const auto& allocations = executor_.state().allocations;
  if (allocations.empty()) return "none";
  auto it = allocations.begin();
  std::advance(it, std::stoul(index) % allocations.size());
  return it->first;
}

Status ScenarioRunner::ChangeInventory(int index) {
  const std::size_t n = present_.size();
  if (static_cast<std::size_t>(index) < n) {
    present_[static_cast<std::size_t>(index)] = !present_[static_cast<std::size_t>(index)];
  } else {
    present_.assign(n, true);
  }
  sm::ObserveInventory inventory = InventoryOf(node_, now_);
  std::vector<events::Device> kept;
  for (std::size_t i = 0; i < n; ++i) {
    if (present_[i]) kept.push_back(inventory.devices[i]);
  }
  inventory.devices = kept;
  return Execute(inventory);
}

Status ScenarioRunner::ChangeMapping(int a, int b) {
  const std::size_t n = mapping_.size();
  const std::size_t i = static_cast<std::size_t>(a) % n, j = static_cast<std::size_t>(b) % n;
  if (i == j) {
    mapping_ = node_.bdfs_by_module;
  } else {
    std::swap(mapping_[i], mapping_[j]);
  }
  NodeFixture mapped = node_;
  mapped.bdfs_by_module = mapping_;
  sm::Decision decision;
  GFP_RETURN_IF_ERROR(Execute(MappingOf(mapped, now_), &decision));
  if (!decision.refusal.empty()) {
    // The operator puts the file back (a refused mapping also stops start-up).
    ++stats_.mapping_refusals;
    for (auto& [module, bdf] : executor_.state().bdf_of_module) mapping_[module - 1] = bdf;
  }
  return Status::Ok();
}

// Resolves the index-based references of `step` against the live state and the node.
void ScenarioRunner::Resolve(Step& step) {
  const sm::State& s = executor_.state();
  if (auto* r = std::get_if<sm::ReleaseAllocation>(&step.command)) {
    r->allocation_id = LiveAllocation(std::to_string(step.args[0]));
  } else if (auto* p = std::get_if<sm::ObservePodResources>(&step.command)) {
    const std::string id = LiveAllocation(std::to_string(step.args[0]));
    p->containers.clear();
    if (auto it = s.allocations.find(id); it != s.allocations.end()) {
      p->containers.push_back(
          {"ns", "virt-launcher-" + id, "compute", it->second.resource, it->second.devices});
    }
  } else if (auto* h = std::get_if<sm::ObserveDeviceHealth>(&step.command)) {
    h->bdf =
        node_.bdfs_by_module[static_cast<std::size_t>(step.args[0]) % node_.bdfs_by_module.size()];
  } else if (auto* e = std::get_if<sm::EnsurePartitionActive>(&step.command)) {
    auto it = s.allocations.find(LiveAllocation(std::to_string(step.args[0])));
    e->device_ids = it == s.allocations.end() ? std::vector<std::string>{} : it->second.devices;
  } else if (auto* c = std::get_if<sm::PrepareClaim>(&step.command)) {
    c->claim.set_uid("claim-" + std::to_string(step.args[0]));
    c->claim.set_namespace_("vms");
    c->claim.set_name("vm-" + std::to_string(step.args[0]));
    c->reserved_for = {"vms/virt-launcher-vm-" + std::to_string(step.args[0])};
    c->files_present = step.args[1] != 0;
  } else if (auto* u = std::get_if<sm::UnprepareClaim>(&step.command)) {
    u->claim_uid = "claim-" + std::to_string(step.args[0]);
  } else if (auto* f = std::get_if<sm::ObserveFabricState>(&step.command)) {
    // FM changes behind the plugin's back, then the plugin reads FM's state.
    if (step.args[0] < 8 && !fm_active_.empty()) {
      auto lost = fm_active_.begin();
      std::advance(lost, static_cast<std::size_t>(step.args[0]) % fm_active_.size());
      fm_active_.erase(lost);
      ++stats_.fm_lost;
    }
    const auto extra = static_cast<std::size_t>(step.args[1]);
    if (extra < node_.partitions.size() && !fm_active_.count(node_.partitions[extra].first) &&
        !OverlapsFmActive(node_.partitions[extra].first)) {
      fm_active_.insert(node_.partitions[extra].first);
      ++stats_.fm_extra;
    }
    f->partitions = PartitionsOf(node_, fm_active_);
    f->pod_holders_known = step.args[2] % 2 == 0;
    f->held_allocations = {LiveAllocation(std::to_string(step.args[3]))};
  }
}

Status ScenarioRunner::RunStep(Step step) {
  now_ += kStep;
  std::visit([&](auto& c) { c.now = now_; }, step.command);
  const bool fm_only = std::holds_alternative<sm::ObserveFabricState>(step.command) ||
                       std::holds_alternative<sm::ReleaseOrphanPartition>(step.command) ||
                       std::holds_alternative<sm::ResyncFabricManager>(step.command) ||
                       std::holds_alternative<sm::ObserveFabricManagerConnection>(step.command) ||
                       std::holds_alternative<sm::ObserveModuleMapping>(step.command);
  if (fm_only && !fm_enabled_) return Status::Ok();
  if (step.label == "plugin-restart") return Restart();
  if (step.label == "inventory") return ChangeInventory(step.args[0]);
  if (step.label == "mapping") return ChangeMapping(step.args[0], step.args[1]);
  Resolve(step);
  bool crashed = false;
  GFP_RETURN_IF_ERROR(RunSaga(step.command, step, &crashed));
  if (!crashed && std::holds_alternative<sm::ObserveFabricState>(step.command)) {
    return ExpectJournalMatchesFm();
  }
  if (!crashed) return FinishClaimFiles(step.command);
  ++stats_.crashes_mid_saga;
  return Restart();
}

// The files step of a claim command that left its claim waiting for it (the DRA plugin writes
// or removes the files, then records it).
Status ScenarioRunner::FinishClaimFiles(const sm::Command& command) {
  std::string uid;
  if (const auto* c = std::get_if<sm::PrepareClaim>(&command)) uid = c->claim.uid();
  if (const auto* u = std::get_if<sm::UnprepareClaim>(&command)) uid = u->claim_uid;
  if (uid.empty()) return Status::Ok();
  switch (sm::ClaimProgressOf(executor_.state(), uid)) {
    case sm::ClaimProgress::kWriteFiles:
      return Execute(sm::RecordClaimFiles{now_, uid});
    case sm::ClaimProgress::kRemoveFiles:
      return Execute(sm::RecordClaimFilesRemoved{now_, uid});
    default:
      return Status::Ok();
  }
}

// The end of a node's life as kubelet would bring it: every claim left waiting (a crash between
// its steps, a refused deactivation) is prepared or unprepared by a retry, and then nothing is
// pending: no intent, no claim between its steps.
Status ScenarioRunner::SettleClaims() {
  std::vector<std::string> waiting;
  for (const auto& [id, a] : executor_.state().allocations) {
    if (a.claim) waiting.push_back(a.claim->uid);
  }
  for (const auto& [uid, u] : executor_.state().unpreparing_claims) waiting.push_back(uid);
  for (const std::string& uid : waiting) {
    const sm::ClaimProgress progress = sm::ClaimProgressOf(executor_.state(), uid);
    if (progress == sm::ClaimProgress::kDeactivating ||
        progress == sm::ClaimProgress::kRemoveFiles) {
      sm::UnprepareClaim retry{now_, uid, events::ClaimUnprepareRequested::REASON_KUBELET, ""};
      GFP_RETURN_IF_ERROR(RunSaga(retry, Step{}, nullptr));
    }
    GFP_RETURN_IF_ERROR(FinishClaimFiles(sm::UnprepareClaim{now_, uid, {}, ""}));
  }
  const sm::State& s = executor_.state();
  if (!s.intents.empty()) return Internal("a transition is still pending after the claims settled");
  if (!s.unpreparing_claims.empty()) {
    return Internal("claim " + s.unpreparing_claims.begin()->first +
                    " is still being unprepared after kubelet's retry");
  }
  // Restated from the fields (not through ClaimProgressOf, which the runner acted on): granted,
  // its partition active and its own, and still no ClaimPrepared.
  for (const auto& [id, a] : s.allocations) {
    if (!a.claim || a.claim->prepared || a.status != sm::AllocationStatus::kGranted) continue;
    const auto active = a.partition ? s.active.find(*a.partition) : s.active.end();
    if (!a.partition || (active != s.active.end() && active->second.owner == id)) {
      return Internal("claim " + a.claim->uid + " still waits for its files");
    }
  }
  return Status::Ok();
}

Status ScenarioRunner::Run(const std::vector<Step>& steps) {
  GFP_RETURN_IF_ERROR(StartUp().WithContext("booting"));
  for (std::size_t i = 0; i < steps.size(); ++i) {
    GFP_RETURN_IF_ERROR(
        RunStep(steps[i]).WithContext("step " + std::to_string(i) + " (" + steps[i].label + ")"));
  }
  if (!fm_enabled_ || executor_.state().fm_connected) {
    return SettleClaims().WithContext("settling the claims");
  }
  return Status::Ok();
}

std::string RestartKind(const ScenarioStats& s) {
  if (s.crashes_mid_saga > 0) {
    return s.interrupted_outcomes > 0 ? "crash mid-allocation, interrupted outcome recovered"
                                      : "crash mid-allocation, nothing pending";
  }
  return s.restarts > 0 ? "clean restarts only" : "no restart";
}

std::string NodeChangeKind(const ScenarioStats& s) {
  // One inventory and one mapping are journaled at the first boot.
  const bool inventory = s.inventory_changes > 1, mapping = s.mapping_changes > 1;
  std::string kind = inventory && mapping ? "device and mapping changes"
                     : inventory          ? "device changes"
                     : mapping            ? "mapping changes"
                                          : "no node change";
  return kind + (s.mapping_refusals > 0 ? ", a mapping refused" : "");
}

std::string FabricChangeKind(const ScenarioStats& s) {
  std::string kind = s.fm_lost > 0 && s.fm_extra > 0 ? "FM lost and gained partitions"
                     : s.fm_lost > 0                 ? "FM lost partitions"
                     : s.fm_extra > 0                ? "FM gained partitions"
                                                     : "FM unchanged";
  return kind + (s.drifts > 0 ? ", drift journaled" : "");
}

NodeFixture AnyNode(int which) {
  switch (which % 3) {
    case 0:
      return H100Node();
    case 1:
      return B200Node();
    default:
      return A100Node();
  }
}

}  // namespace gfp::testing
