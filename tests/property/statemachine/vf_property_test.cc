// Properties of SR-IOV vGPU VFs with Fabric Manager (issue 10, SPEC §9) over random lives of an
// H100 node in vGPU mode (8 GPUs with 1-3 VFs each, the module mapping of the GPUs): requests of
// one VF per GPU of a partition (and misaligned ones), FM failures and IN_USE, FM losing or
// gaining partitions behind the plugin's back, PreStart, pods, releases, restarts and crashes in
// the middle of an allocation followed by start-up recovery.
//  (a) every activation journaled (and its Effect) for an allocation with VFs carries exactly the
//      list of that allocation's first activation, one VF per GPU in the partition's GPU order
//      (the modelled FM answers FM_ST_BADPARAM otherwise, which fails the property);
//  (b) invariants hold and no anomaly is journaled after every apply, including "a partition is
//      never activated for two device kinds at once";
//      and a partition of a live allocation is never deactivated for another request;
//  (c) Decide's scratch state equals the state after applying its events, and replaying the
//      encoded journal at every restart rebuilds the live state.
// A failure prints the shrunk steps and the seed; rerun with
//   RC_PARAMS="seed=<n>" build/tests/property/statemachine/statemachine_property_tests
//     --gtest_filter=VfProperty.*
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>

#include "common/sm_fixtures.h"
#include "common/strings.h"
#include "scenario.h"
#include "statemachine/event_codec.h"
#include "statemachine/recovery.h"

namespace gfp::sm {
namespace {

using gfp::testing::NodeFixture;

constexpr const char* kVfResource = "nvidia.com/NVIDIA_H100XM-80C";

enum class Kind { kRequest, kRelease, kPreStart, kPods, kFabric, kRestart };

struct VfStep {
  Kind kind = Kind::kRequest;
  // kRequest: partition index, then per GPU the VF index (misaligned: any VF indexes);
  // others: indexes resolved against the live state.
  std::vector<int> args;
  bool misaligned = false;
  std::vector<int> fm_codes;  // injected FM failures, consumed by effects; 0 when exhausted
  int crash_at = -1;          // the plugin dies at this effect (after FM when crash_after_fm)
  bool crash_after_fm = false;
};

void showValue(const VfStep& s, std::ostream& os) {
  static const char* names[] = {"request", "release", "prestart", "pods", "fabric", "restart"};
  os << names[static_cast<int>(s.kind)] << (s.misaligned ? "(misaligned)" : "") << " args";
  for (int a : s.args) os << " " << a;
  if (!s.fm_codes.empty()) {
    os << " fm";
    for (int c : s.fm_codes) os << " " << c;
  }
  if (s.crash_at >= 0)
    os << " crash at effect " << s.crash_at << (s.crash_after_fm ? " after FM" : "");
}

rc::Gen<VfStep> GenStep() {
  using rc::gen::inRange;
  auto codes = rc::gen::container<std::vector<int>>(
      2, rc::gen::weightedElement<int>({{12, 0}, {1, -2}, {1, -10}}));
  auto crash = rc::gen::weightedOneOf<int>({{6, rc::gen::just(-1)}, {1, inRange(0, 3)}});
  return rc::gen::build<VfStep>(
      rc::gen::set(&VfStep::kind, rc::gen::weightedElement<Kind>({{8, Kind::kRequest},
                                                                  {3, Kind::kRelease},
                                                                  {2, Kind::kPreStart},
                                                                  {2, Kind::kPods},
                                                                  {3, Kind::kFabric},
                                                                  {1, Kind::kRestart}})),
      rc::gen::set(&VfStep::args, rc::gen::container<std::vector<int>>(9, inRange(0, 64))),
      rc::gen::set(&VfStep::misaligned, rc::gen::weightedElement<bool>({{5, false}, {1, true}})),
      rc::gen::set(&VfStep::fm_codes, codes), rc::gen::set(&VfStep::crash_at, crash),
      rc::gen::set(&VfStep::crash_after_fm, rc::gen::arbitrary<bool>()));
}

class VfLife {
 public:
  VfLife(NodeFixture node, std::vector<int> vfs_per_gpu)
      : node_(std::move(node)), vfs_per_gpu_(std::move(vfs_per_gpu)) {
    driver_.report_to_gtest = false;
  }

  Status Run(const std::vector<VfStep>& steps) {
    GFP_RETURN_IF_ERROR(StartUp().WithContext("booting"));
    for (std::size_t i = 0; i < steps.size(); ++i) {
      GFP_RETURN_IF_ERROR(RunStep(steps[i]).WithContext("step " + std::to_string(i)));
    }
    return Status::Ok();
  }
  int activations_with_vfs() const { return activations_with_vfs_; }
  int reactivations() const { return reactivations_; }

 private:
  std::string Vf(std::size_t gpu, int index) const {
    const std::string& bdf = node_.bdfs_by_module[gpu];
    return bdf.substr(0, bdf.size() - 1) + std::to_string(4 + index);
  }

  // Judged from what this life put on the node, not by the product's AnyVf: every device it
  // inventories is a VF, at an address that is none of the GPUs'.
  bool IsVf(const std::string& device) const {
    return std::find(node_.bdfs_by_module.begin(), node_.bdfs_by_module.end(), device) ==
           node_.bdfs_by_module.end();
  }

  ObserveInventory Inventory() const {
    ObserveInventory inventory;
    inventory.now = now_;
    for (std::size_t g = 0; g < node_.bdfs_by_module.size(); ++g) {
      for (int v = 0; v < vfs_per_gpu_[g]; ++v) {
        events::Device d;
        d.set_bdf(Vf(g, v));
        d.set_resource(kVfResource);
        d.set_numa_node(node_.numa_by_module[g]);
        d.set_kind(events::DEVICE_KIND_VGPU_VF);
        d.set_parent_bdf(node_.bdfs_by_module[g]);
        inventory.devices.push_back(d);
      }
    }
    return inventory;
  }

  // Decides, journals, applies; checks (b) and (c) and the VF lists of (a).
  Status Execute(const Command& command, Decision* out = nullptr) {
    const State before = driver_.state;
    Decision decision = Decide(before, command);
    GFP_RETURN_IF_ERROR(CheckActivations(before, decision));
    driver_.Commit(decision.events);
    if (!driver_.broken.empty()) return Internal("invariant broken: " + driver_.broken);
    if (driver_.state.anomaly_count != 0) {
      return Internal("anomaly: " + driver_.state.recent_anomalies.back().description);
    }
    const State& decided = decision.state_after ? *decision.state_after : before;
    if (!(decided == driver_.state)) {
      return Internal("Decide's scratch state " + gfp::testing::StateDiff(driver_.state, decided));
    }
    // Another live VM's partition is never deactivated: owners are released (superseded) first.
    for (const auto& [pid, intent] : driver_.state.intents) {
      auto active = driver_.state.active.find(pid);
      if (intent.kind == IntentKind::kDeactivate && active != driver_.state.active.end() &&
          !active->second.owner.empty()) {
        return Internal("partition " + std::to_string(pid) + " of live allocation " +
                        active->second.owner + " is being deactivated");
      }
    }
    if (out) *out = std::move(decision);
    return Status::Ok();
  }

  // (a): the list of every activation for an allocation with VFs is its first one, one VF per
  // GPU in the partition's GPU order; the effect carries the journaled list.
  Status CheckActivations(const State& before, const Decision& decision) {
    std::vector<std::vector<Bdf>> journaled;
    for (const auto& e : decision.events) {
      if (!e.has_partition_activation_requested()) continue;
      const auto& r = e.partition_activation_requested();
      const std::vector<Bdf> vfs(r.vf_bdfs().begin(), r.vf_bdfs().end());
      journaled.push_back(vfs);
      auto allocation = before.allocations.find(r.allocation_id());
      const bool with_vfs =
          allocation != before.allocations.end()
              ? std::any_of(allocation->second.devices.begin(), allocation->second.devices.end(),
                            [this](const auto& id) { return IsVf(id); })
              : !vfs.empty();
      if (!with_vfs) continue;
      ++activations_with_vfs_;
      if (vfs.empty())
        return Internal("activation for VF allocation " + r.allocation_id() + " without a VF list");
      auto [first, fresh] = first_list_.emplace(r.allocation_id(), vfs);
      if (!fresh) ++reactivations_;
      if (first->second != vfs) {
        return Internal("activation for " + r.allocation_id() + " with [" + Join(vfs) +
                        "], its first one had [" + Join(first->second) + "]");
      }
    }
    std::size_t next = 0;
    for (const auto& effect : decision.effects) {
      if (effect.kind != Effect::Kind::kActivatePartition) continue;
      if (next >= journaled.size() || effect.vf_bdfs != journaled[next++]) {
        return Internal("an activation effect's VF list is not the journaled one");
      }
    }
    return Status::Ok();
  }

  // The modelled FM (FABRIC_MODE=2): IN_USE over an active partition, BADPARAM for a VF list
  // that is not one VF per GPU in the partition's GPU order (a property failure: Decide made it).
  Result<events::FmResult> CarryOut(const Effect& effect, int code) {
    if (code != 0) return gfp::testing::FmError(code, gfp::testing::FmName(code));
    switch (effect.kind) {
      case Effect::Kind::kActivatePartition: {
        const auto& modules = Modules(effect.partition_id);
        if (effect.vf_bdfs.size() != modules.size()) {
          return Internal("FM_ST_BADPARAM: " + std::to_string(effect.vf_bdfs.size()) +
                          " VFs for partition " + std::to_string(effect.partition_id));
        }
        for (std::size_t i = 0; i < modules.size(); ++i) {
          const std::string gpu = node_.bdfs_by_module[modules[i] - 1];
          if (effect.vf_bdfs[i].substr(0, 10) != gpu.substr(0, 10)) {
            return Internal("FM_ST_BADPARAM: VF " + effect.vf_bdfs[i] + " is not on GPU " + gpu);
          }
        }
        if (OverlapsFm(effect.partition_id)) return gfp::testing::FmError(-7, "FM_ST_IN_USE");
        fm_active_.insert(effect.partition_id);
        return gfp::testing::FmOk();
      }
      case Effect::Kind::kDeactivatePartition:
        if (!fm_active_.erase(effect.partition_id)) {
          return gfp::testing::FmError(-4, "FM_ST_UNINITIALIZED");
        }
        return gfp::testing::FmOk();
      case Effect::Kind::kSetActivatedPartitions:
        fm_active_ = {effect.partition_ids.begin(), effect.partition_ids.end()};
        return gfp::testing::FmOk();
    }
    return gfp::testing::FmOk();
  }

  const std::vector<std::uint32_t>& Modules(PartitionId pid) const {
    for (const auto& [id, modules] : node_.partitions) {
      if (id == pid) return modules;
    }
    static const std::vector<std::uint32_t> none;
    return none;
  }

  bool OverlapsFm(PartitionId pid) const {
    for (PartitionId active : fm_active_) {
      for (auto m : Modules(active)) {
        const auto& mine = Modules(pid);
        if (std::find(mine.begin(), mine.end(), m) != mine.end()) return true;
      }
    }
    return false;
  }

  Status RunSaga(const Command& command, const VfStep& step, bool* crashed) {
    Decision decision;
    GFP_RETURN_IF_ERROR(Execute(command, &decision));
    std::vector<Effect> effects = decision.effects;
    std::size_t next_code = 0;
    for (std::size_t i = 0; i < effects.size(); ++i) {
      now_ += 1000;
      if (static_cast<int>(i) == step.crash_at) {
        if (step.crash_after_fm) GFP_RETURN_IF_ERROR(CarryOut(effects[i], 0).status());
        *crashed = true;
        return Status::Ok();
      }
      const int code = next_code < step.fm_codes.size() ? step.fm_codes[next_code++] : 0;
      GFP_ASSIGN_OR_RETURN(events::FmResult fm, CarryOut(effects[i], code));
      GFP_RETURN_IF_ERROR(Execute(OutcomeOf(effects[i], now_, fm), &decision));
      effects.insert(effects.end(), decision.effects.begin(), decision.effects.end());
    }
    return Status::Ok();
  }

  Status Observe(bool holders_known, const std::vector<AllocationId>& held) {
    ObserveFabricState observed;
    observed.now = now_;
    observed.partitions = gfp::testing::PartitionsOf(node_, fm_active_);
    observed.pod_holders_known = holders_known;
    observed.held_allocations = held;
    bool crashed = false;
    return RunSaga(observed, VfStep{}, &crashed);
  }

  Status StartUp() {
    now_ += 1'000'000;
    StartPlugin start;
    start.now = now_;
    start.version = "test";
    start.fabric_manager_enabled = true;
    GFP_RETURN_IF_ERROR(Execute(start));
    GFP_RETURN_IF_ERROR(Execute(Inventory()));
    GFP_RETURN_IF_ERROR(Execute(gfp::testing::MappingOf(node_, now_)));
    ObserveFabricManagerConnection up;
    up.now = now_;
    up.connected = true;
    up.address = "/run/nvidia-fabricmanager/fmpm.sock";
    up.connect_params_version = 2;
    GFP_RETURN_IF_ERROR(Execute(up));
    for (const auto& outcome : ResolvePendingIntents(driver_.state, fm_active_, now_)) {
      bool crashed = false;
      GFP_RETURN_IF_ERROR(RunSaga(outcome, VfStep{}, &crashed));
    }
    GFP_RETURN_IF_ERROR(Execute(AbandonInterruptedRequests{now_}));
    return Observe(false, {});
  }

  // (c): the encoded journal replays to the live state; then the process starts again.
  Status Restart() {
    State rebuilt;
    for (std::size_t i = 0; i < driver_.journal.size(); ++i) {
      const events::Event& e = driver_.journal[i];
      auto decoded = DecodeEvent(EventTypeName(e), e.time_unix_micros(), EncodeEvent(e));
      if (!decoded.ok()) return decoded.status();
      Apply(rebuilt, i + 1, *decoded);
    }
    if (!(rebuilt == driver_.state)) {
      return Internal("replay " + gfp::testing::StateDiff(driver_.state, rebuilt));
    }
    driver_.state = std::move(rebuilt);
    return StartUp().WithContext("restart");
  }

  const Allocation* LiveAt(int index) const {
    const auto& all = driver_.state.allocations;
    if (all.empty()) return nullptr;
    auto it = all.begin();
    std::advance(it, static_cast<std::size_t>(index) % all.size());
    return &it->second;
  }

  RequestAllocation Request(const VfStep& step) const {
    RequestAllocation r;
    r.now = now_;
    r.resource = kVfResource;
    if (step.misaligned) {  // a few VFs anywhere, perhaps two of one GPU
      for (std::size_t i = 0; i < 1 + static_cast<std::size_t>(step.args[0] % 3); ++i) {
        const std::size_t g = static_cast<std::size_t>(step.args[1 + i]) % 8;
        const std::string vf = Vf(g, step.args[5 + i] % vfs_per_gpu_[g]);
        if (std::find(r.device_ids.begin(), r.device_ids.end(), vf) == r.device_ids.end()) {
          r.device_ids.push_back(vf);
        }
      }
      return r;
    }
    const auto& partition =
        node_.partitions[static_cast<std::size_t>(step.args[0]) % node_.partitions.size()];
    for (std::size_t i = 0; i < partition.second.size(); ++i) {
      const std::size_t g = partition.second[i] - 1;
      r.device_ids.push_back(Vf(g, step.args[1 + i] % vfs_per_gpu_[g]));
    }
    // kubelet's order is not the partition's.
    std::rotate(r.device_ids.begin(),
                r.device_ids.begin() +
                    static_cast<long>(static_cast<std::size_t>(step.args[8]) % r.device_ids.size()),
                r.device_ids.end());
    return r;
  }

  Status RunStep(const VfStep& step) {
    now_ += 1'000'000;
    Command command;
    switch (step.kind) {
      case Kind::kRequest:
        command = Request(step);
        break;
      case Kind::kRelease: {
        const Allocation* a = LiveAt(step.args[0]);
        if (!a || a->status == AllocationStatus::kRequested) return Status::Ok();
        command = ReleaseAllocation{now_, a->id, events::AllocationReleased::REASON_DEVICES_UNUSED,
                                    "unused"};
        break;
      }
      case Kind::kPreStart: {
        const Allocation* a = LiveAt(step.args[0]);
        command = EnsurePartitionActive{now_, a ? a->devices : std::vector<Bdf>{}};
        break;
      }
      case Kind::kPods: {
        const Allocation* a = LiveAt(step.args[0]);
        if (!a) return Status::Ok();
        command = ObservePodResources{
            now_, {{"ns", "virt-launcher-" + a->id, "compute", a->resource, a->devices}}};
        break;
      }
      case Kind::kFabric: {
        // FM loses a partition and/or activates one (without VFs the plugin knows) behind the
        // plugin's back; then the plugin observes FM.
        if (step.args[0] % 2 == 0 && !fm_active_.empty()) {
          auto lost = fm_active_.begin();
          std::advance(lost, static_cast<std::size_t>(step.args[1]) % fm_active_.size());
          fm_active_.erase(lost);
        }
        const auto extra =
            node_.partitions[static_cast<std::size_t>(step.args[2]) % node_.partitions.size()]
                .first;
        if (step.args[3] % 3 == 0 && !OverlapsFm(extra)) fm_active_.insert(extra);
        const Allocation* held = LiveAt(step.args[4]);
        return Observe(step.args[5] % 2 == 0,
                       held ? std::vector<AllocationId>{held->id} : std::vector<AllocationId>{});
      }
      case Kind::kRestart:
        return Restart();
    }
    bool crashed = false;
    GFP_RETURN_IF_ERROR(RunSaga(command, step, &crashed));
    return crashed ? Restart().WithContext("after a crash") : Status::Ok();
  }

  NodeFixture node_;
  std::vector<int> vfs_per_gpu_;
  gfp::testing::Driver driver_;
  Micros now_ = 1'700'000'000'000'000;
  std::set<PartitionId> fm_active_;
  std::map<AllocationId, std::vector<Bdf>> first_list_;
  int activations_with_vfs_ = 0;
  int reactivations_ = 0;
};

RC_GTEST_PROP(VfProperty, VfListsAreFirstActivationsAndInvariantsAndReplayHold, ()) {
  const auto vfs_per_gpu = *rc::gen::container<std::vector<int>>(8, rc::gen::inRange(1, 4));
  const auto steps = *rc::gen::scale(2.0, rc::gen::container<std::vector<VfStep>>(GenStep()));
  VfLife life(gfp::testing::H100Node(), vfs_per_gpu);
  const Status status = life.Run(steps);
  if (!status.ok()) RC_FAIL(status.message());
  RC_CLASSIFY(life.activations_with_vfs() > 0, "activated with VFs");
  RC_CLASSIFY(life.reactivations() > 0, "re-activated with VFs");
}

}  // namespace
}  // namespace gfp::sm
