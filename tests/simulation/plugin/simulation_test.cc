// Deterministic simulation of the plugin. A seeded generator plays long scenarios in one thread
// against the real PluginCore, the real engine (SQLite journal in the world's folder), the
// in-memory Fabric Manager behind the core's FabricPort (sim/world: the same FM model as the C ABI
// simulator, no dlopen, no worker thread, no deadline clock) and a fake HGX H100, HGX A100 or H100
// vGPU (SR-IOV VFs, FABRIC_MODE=2) node tree, with a manual clock and no gRPC: a seed reproduces
// a run byte for byte, and every seed is run twice and must leave the same journal (chain head).
// The test plays kubelet (GPA -> Allocate -> PreStart admission, PodResources for
// reconciliation), Fabric Manager's bad days (injected failures, dropped connections,
// unreachable, restarts with and without resiliency, drift, replies lost after FM carried a call
// out, calls that do not answer within the deadline and complete later), kubelet restarts,
// plugin crashes, crashes between two steps of a saga (the process dies inside the FM call,
// before or after FM carries it out, then restarts from the journal) and VFIO health flaps, and
// checks after every step:
//   1. the engine's state passes sm::CheckInvariants;
//   2. once settled (FM healthy and a reconcile completed since the last FM disturbance), every
//      running VM's devices are exactly one partition of FM's own table, active in the journal
//      and in FM, owned by a live allocation of exactly those devices, sharing no GPU with
//      another active partition; and FM's active set equals the journal's;
//   3. no partition of a running VM is ever deactivated in FM by the plugin (FM's call log);
//   4. after every pod is gone and the release grace has passed with FM healthy, FM's and the
//      journal's active sets are both empty (a drain, now and then and at the end);
//   5. the journal replays from seq 1 (with invariant checks) to the live state;
//   6. while a late FM call has not completed, Allocate answers with a timeout ("no reply
//      within") or "not attempted".
// The judges read FM's partition table and the fake node (module ids, VF parents), never the
// plugin's own helpers.
//
// Reproduce a failure with the seed it prints:
//   GFP_SIM_SEED=<n> [GFP_SIM_STEPS=<steps>] ./simulation_plugin_test
// Many seeds: GFP_SIM_SEED=<first> GFP_SIM_SEEDS=<count> ./simulation_plugin_test
// GFP_SIM_LOG=1 shows the plugin's own log; GFP_SIM_TRACE=1 prints every step;
// GFP_SIM_ONCE=1 runs each seed once (no determinism check).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/sanitizer_build.h"
#include "common/temp_dir.h"
#include "engine/engine.h"
#include "sim/world/deterministic_world.h"
#include "statemachine/invariants.h"
#include "statemachine/state.h"
#include "store/hash_chain.h"

namespace gfp::simtest {
namespace {

// 187: a failed drift repair that was never retried (fixed in DecideFabricState).
// 10241, 10294, 10389: a re-activation whose reply came too late (or was lost) took effect and
// was adopted without an owner (fixed: DriftDetected.owner_allocation_id).
// 20029, 20986: the same with vGPU VFs (fixed: DriftDetected.vf_bdfs, the owner's list).
constexpr std::uint64_t kDefaultSeeds[] = {1,   2,     3,     4,     5,     6,
                                           187, 10241, 10294, 10389, 20029, 20986};
// The default run: the seeds above, then 1000 + i up to this many, each run twice.
// Sanitizer builds (ASan+UBSan, TSan: 5-10x slower) look for memory errors and races on the same
// paths with fewer seeds; the release build's run carries the full count.
// They also run each seed once: the second run checks determinism, which no sanitizer adds to.
constexpr std::uint64_t kDefaultSeedCount = testing::kSanitizerBuild ? 40 : 500;
constexpr int kDefaultSteps = 200;
constexpr std::size_t kHistoryLines = 30;

// std::mt19937_64's output is fixed by the standard; the distributions are not, so they are
// written here: a seed means the same scenario with every standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}

  // Uniform in [0, n) by rejection sampling; n > 0.
  std::uint64_t Below(std::uint64_t n) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = kMax - kMax % n;  // a multiple of n
    std::uint64_t x = gen_();
    while (x >= limit) x = gen_();
    return x % n;
  }
  bool Chance(std::uint64_t num, std::uint64_t den) { return Below(den) < num; }
  // An index drawn with the given weights.
  std::size_t Weighted(const std::vector<std::uint64_t>& weights) {
    std::uint64_t total = 0;
    for (auto w : weights) total += w;
    std::uint64_t x = Below(total);
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return weights.size() - 1;
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(Below(v.size()))];
  }

 private:
  std::mt19937_64 gen_;
};

std::uint64_t EnvU64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

std::string Join(const std::vector<std::string>& items, const char* sep = ",") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

template <typename T>
std::string JoinIds(const T& ids) {
  std::string out;
  for (const auto& id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return "{" + out + "}";
}

std::string Times(int n) {
  return n == fmsim::kAlways ? std::string("all") : "the next " + std::to_string(n);
}

// A pod (a KubeVirt VM's virt-launcher) as kubelet sees it.
struct Vm {
  std::string name;
  std::vector<std::string> devices;  // as handed to Allocate
  sm::PartitionId partition = 0;
  bool running = false;   // PreStart succeeded; false: admitted, container not started
  int running_since = 0;  // the step at which it last started running
};

class Scenario {
 public:
  Scenario(std::uint64_t seed, int steps, std::filesystem::path dir)
      : seed_(seed), steps_(steps), dir_(std::move(dir)), rng_(seed) {}

  // Empty when every invariant held, else the failure report.
  std::string Run();
  const std::map<std::string, int>& stats() const { return stats_; }
  // The journal's head when the run ended, "SEQ HASH" (as `journal verify` prints it).
  const std::string& chain_head() const { return chain_head_; }

 private:
  // --- steps --------------------------------------------------------------------------------
  void Step();
  void AdmitVm();
  void StartContainer(Vm& vm, std::string& line);
  // The VM kubelet admits once Allocate granted `devices`: they must be exactly one partition
  // (the test fails otherwise and nullopt is returned).
  std::optional<Vm> GrantedVm(const std::string& name, const std::vector<std::string>& devices);
  void DeleteVm();
  void RestartContainer();
  void ReconcileTick();
  void ClockJump();
  void FmFault();
  void KubeletRestart();
  void PluginCrash();
  void SagaCrash();
  void CrashDuringActivation(fmsim::CrashPoint point, const std::string& when);
  void CrashDuringDeactivation(fmsim::CrashPoint point, const std::string& when);
  void CrashDuringReactivation(fmsim::CrashPoint point, const std::string& when);
  void CrashDuringResync(fmsim::CrashPoint point, const std::string& when);
  // Restarts the plugin and runs `work` in it, armed to crash at `point` of `function`; then
  // restarts the plugin from the journal. True when the process died there.
  bool CrashDuring(const char* function, fmsim::CrashPoint point,
                   const std::function<void()>& work);
  void CompleteLateCalls();
  void HealthFlap();
  void Drain();

  // --- helpers ------------------------------------------------------------------------------
  std::vector<adapters::kubelet::ContainerDeviceAssignment> PodResources() const;
  std::set<std::string> HeldDevices() const;
  bool FmHealthy() const { return !fm_unreachable_ && !faults_armed_; }
  void Disturb() { settled_ = false; }
  // The GPUs (module ids) of a partition of FM's table, and of devices: the judge's view.
  std::set<std::uint32_t> FmModules(sm::PartitionId id) const;
  std::set<std::uint32_t> ModulesOf(const std::vector<std::string>& devices) const;
  void Record(const std::string& line);
  void Expect(const Status& status, const std::string& what);

  // --- invariants ---------------------------------------------------------------------------
  void CheckAll();
  void CheckRunningVmsPartitioned(const sm::State& s, const std::vector<std::uint32_t>& fm_active);
  void Fail(const std::string& what);
  bool failed() const { return !failure_.empty(); }

  const std::uint64_t seed_;
  const int steps_;
  const std::filesystem::path dir_;
  Rng rng_;
  std::unique_ptr<simworld::DeterministicWorld> world_;
  sim::NodePreset preset_ = sim::NodePreset::kHgxH100;
  bool vgpu_ = false;  // the H100 vGPU node: VFs, FM in FABRIC_MODE=2
  const char* activate_fn_ = "fmActivateFabricPartition";

  int step_ = 0;
  std::uint64_t next_vm_ = 1;
  std::vector<Vm> vms_;
  std::set<std::string> removed_groups_;  // /dev/vfio/<group> nodes removed
  bool fm_unreachable_ = false;
  bool faults_armed_ = false;  // injected failures may still be pending
  bool slow_armed_ = false;    // a late FM call (DelayNext) may be armed or pending
  bool settled_ = false;       // FM healthy and a reconcile completed since the last disturbance
  bool last_was_settling_reconcile_ = false;

  std::deque<std::string> history_;
  std::string failure_;
  std::string chain_head_;
  std::map<std::string, int> stats_;
  bool trace_ = std::getenv("GFP_SIM_TRACE") != nullptr;
};

// ------------------------------------------------------------------------------------------

std::string Scenario::Run() {
  const std::size_t kind = rng_.Weighted({3, 2, 1});  // H100, A100 x16, H100 vGPU VFs
  preset_ = kind == 1 ? sim::NodePreset::kHgxA100x16 : sim::NodePreset::kHgxH100;
  vgpu_ = kind == 2;
  activate_fn_ = vgpu_ ? "fmActivateFabricPartitionWithVFs" : "fmActivateFabricPartition";
  simworld::DeterministicOptions options;
  options.dir = dir_;
  options.node.preset = preset_;
  if (vgpu_) options.node.vgpu = sim::VgpuNodePreset::kVfH100;
  auto world = simworld::DeterministicWorld::Create(options);
  if (!world.ok()) return "GFP_SIM_SEED=" + std::to_string(seed_) + ": " + world.status().message();
  world_ = std::move(world).value();
  Record("world: " + options.node.Name() + ", FM table " + simworld::FmTableFor(options.node) +
         (vgpu_ ? ", FABRIC_MODE=2" : ""));
  Expect(world_->StartPlugin(), "first start");
  if (!failed()) CheckAll();
  for (step_ = 1; step_ <= steps_ && !failed(); ++step_) {
    Step();
    if (slow_armed_ && !failed()) CompleteLateCalls();
    if (!failed()) CheckAll();
  }
  if (!failed()) {
    step_ = steps_ + 1;
    Drain();
  }
  if (world_->plugin_up()) {
    const auto& journal = world_->core().engine().journal();
    const std::uint64_t last = journal.LastSeq();
    Expect(journal.ForEach(last, last,
                           [&](const store::StoredEvent& e) {
                             chain_head_ = std::to_string(e.seq) + " " + store::HashToHex(e.hash);
                             return Status::Ok();
                           }),
           "reading the chain head");
  }
  return failure_;
}

void Scenario::Step() {
  last_was_settling_reconcile_ = false;
  enum : std::size_t {
    kAdmit,
    kDelete,
    kRestartContainer,
    kReconcile,
    kClockJump,
    kFmFault,
    kKubeletRestart,
    kPluginCrash,
    kHealthFlap,
    kDrain,
    kSagaCrash
  };
  const std::size_t pick = rng_.Weighted({30, 10, 3, 28, 3, 8, 2, 3, 4, 1, 4});
  switch (pick) {
    case kAdmit:
      AdmitVm();
      break;
    case kDelete:
      DeleteVm();
      break;
    case kRestartContainer:
      RestartContainer();
      break;
    case kReconcile:
      ReconcileTick();
      break;
    case kClockJump:
      ClockJump();
      break;
    case kFmFault:
      FmFault();
      break;
    case kKubeletRestart:
      KubeletRestart();
      break;
    case kPluginCrash:
      PluginCrash();
      break;
    case kHealthFlap:
      HealthFlap();
      break;
    case kDrain:
      Drain();
      break;
    case kSagaCrash:
      SagaCrash();
      break;
    default:
      break;
  }
}

std::set<std::string> Scenario::HeldDevices() const {
  std::set<std::string> held;
  for (const auto& vm : vms_) held.insert(vm.devices.begin(), vm.devices.end());
  return held;
}

std::vector<adapters::kubelet::ContainerDeviceAssignment> Scenario::PodResources() const {
  std::vector<adapters::kubelet::ContainerDeviceAssignment> out;
  for (const auto& vm : vms_) {
    out.push_back({"default", vm.name, "compute", world_->resource(), vm.devices});
  }
  return out;
}

std::set<std::uint32_t> Scenario::FmModules(sm::PartitionId id) const {
  return world_->FmPartitionModules(id);
}

std::set<std::uint32_t> Scenario::ModulesOf(const std::vector<std::string>& devices) const {
  return world_->ModulesOf(devices).value_or(std::set<std::uint32_t>{});
}

void Scenario::AdmitVm() {
  const std::string name = "vm-" + std::to_string(next_vm_++);
  std::vector<std::size_t> sizes = {1, 2, 4, 8};
  std::vector<std::uint64_t> weights = {4, 4, 3, 2};
  if (preset_ == sim::NodePreset::kHgxA100x16) {
    sizes.push_back(16);
    weights.push_back(1);
  }
  const std::size_t size = sizes[rng_.Weighted(weights)];
  const bool ignore_preference = rng_.Chance(1, 20);
  const bool crash_before_prestart = rng_.Chance(1, 10);
  std::string line = "admit " + name + " (" + std::to_string(size) + " GPUs)";
  ++stats_["admit"];

  // kubelet's view: healthy devices from ListAndWatch that no pod holds.
  const auto held = HeldDevices();
  std::vector<std::string> available;
  for (const auto& d : world_->core().Devices(world_->resource())) {
    if (d.healthy && held.count(d.id) == 0) available.push_back(d.id);
  }
  if (available.size() < size) {
    Record(line + ": only " + std::to_string(available.size()) + " available, not admitted");
    return;
  }
  std::vector<std::string> chosen;
  if (ignore_preference) {
    // Some kubelet versions / topology policies do not follow the preference.
    std::vector<std::string> pool = available;
    for (std::size_t i = 0; i < size; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng_.Below(pool.size() - i));
      std::swap(pool[i], pool[j]);
      chosen.push_back(pool[i]);
    }
    line += " ignoring GPA";
  } else {
    auto preferred = world_->core().Preferred(world_->resource(), available, {}, size);
    if (!preferred.ok()) {
      Record(line + ": GPA refused: " + preferred.status().message());
      return;
    }
    chosen = *preferred;
    if (chosen.size() != size) {
      Fail("GPA for " + std::to_string(size) + " answered " + std::to_string(chosen.size()) +
           " devices: " + Join(chosen));
      return;
    }
    for (const auto& id : chosen) {
      if (std::find(available.begin(), available.end(), id) == available.end()) {
        Fail("GPA answered " + id + ", which is not available");
        return;
      }
    }
  }
  auto allocated = world_->core().Allocate(world_->resource(), {chosen});
  if (slow_armed_) {
    // A late activation has not completed in FM: the plugin must have given up on it.
    if (world_->fabric().LateCallsInFlight() > 0) {
      if (allocated.ok()) {
        Fail("Allocate [" + Join(chosen) + "] granted while its FM call had not returned");
        return;
      }
      const std::string& why = allocated.status().message();
      if (why.find("no reply within") == std::string::npos &&
          why.find("not attempted") == std::string::npos) {
        Fail("Allocate [" + Join(chosen) +
             "] refused during a slow FM call without a timeout: " + allocated.status().message());
        return;
      }
      ++stats_["timeout-answers"];
    }
  }
  if (!allocated.ok()) {
    ++stats_["admit-refused"];
    Record(line + " [" + Join(chosen) + "]: Allocate refused: " + allocated.status().message());
    return;
  }
  if (allocated->size() != 1 || (*allocated)[0].env_value != Join(chosen)) {
    Fail("Allocate answered a wrong env value for [" + Join(chosen) + "]");
    return;
  }
  const std::optional<Vm> granted = GrantedVm(name, chosen);
  if (!granted) return;
  const Vm& vm = *granted;
  line += " [" + Join(chosen) + "] partition " + std::to_string(vm.partition);
  if (crash_before_prestart) {
    // The plugin dies between kubelet's Allocate and PreStart.
    world_->CrashPlugin();
    Expect(world_->StartPlugin(), "restart between Allocate and PreStart");
    if (failed()) return;
    line += ", plugin crashed before PreStart";
  }
  vms_.push_back(vm);
  StartContainer(vms_.back(), line);
  Record(line);
}

std::optional<Vm> Scenario::GrantedVm(const std::string& name,
                                      const std::vector<std::string>& devices) {
  // Judged from FM's own table and the node's GPUs, not the plugin's view of them.
  const auto partition = world_->FmPartitionOf(devices);
  if (!partition) {
    Fail("Allocate granted [" + Join(devices) + "], which is no partition of FM's table");
    return std::nullopt;
  }
  Vm vm;
  vm.name = name;
  vm.devices = devices;
  vm.partition = *partition;
  return vm;
}

// kubelet's PreStartContainer, then the container runs (or does not, and kubelet retries later).
void Scenario::StartContainer(Vm& vm, std::string& line) {
  Status pre = world_->core().PreStart(world_->resource(), vm.devices);
  if (pre.ok()) {
    vm.running = true;
    vm.running_since = step_;
    ++stats_["running"];
    line += ": running";
  } else {
    vm.running = false;
    ++stats_["prestart-failed"];
    line += ": PreStart failed, pending: " + pre.message();
  }
}

void Scenario::DeleteVm() {
  if (vms_.empty()) {
    Record("delete: no VM");
    return;
  }
  const std::size_t i = static_cast<std::size_t>(rng_.Below(vms_.size()));
  Record("delete " + vms_[i].name + " (partition " + std::to_string(vms_[i].partition) + ")");
  vms_.erase(vms_.begin() + static_cast<std::ptrdiff_t>(i));
  ++stats_["delete"];
}

void Scenario::RestartContainer() {
  if (vms_.empty()) {
    Record("container restart: no VM");
    return;
  }
  Vm& vm = vms_[static_cast<std::size_t>(rng_.Below(vms_.size()))];
  std::string line = "container restart " + vm.name + (vm.running ? "" : " (pending)");
  StartContainer(vm, line);
  Record(line);
}

void Scenario::ReconcileTick() {
  world_->Advance(
      std::chrono::duration_cast<std::chrono::microseconds>(world_->config().reconcile_interval)
          .count());
  world_->core().Reconcile(PodResources());
  ++stats_["reconcile"];
  std::string line = "reconcile (" + std::to_string(vms_.size()) + " pods)";
  if (FmHealthy()) {
    if (!settled_) line += ", settles";
    settled_ = true;
    last_was_settling_reconcile_ = true;
  }
  Record(line);
}

void Scenario::ClockJump() {
  const sm::Micros jump = rng_.Chance(1, 2)
                              ? static_cast<sm::Micros>(1 + rng_.Below(60)) * 1'000'000
                              : static_cast<sm::Micros>(1 + rng_.Below(30)) * 60'000'000;
  world_->Advance(jump);
  Record("clock +" + std::to_string(jump / 1'000'000) + " s");
}

void Scenario::FmFault() {
  auto& fm = world_->fm();
  Disturb();
  ++stats_["fm-fault"];
  enum : std::size_t {
    kActivateFails,
    kDeactivateFails,
    kListFails,
    kClear,
    kDrop,
    kUnreachable,
    kRestartResilient,
    kRestartCold,
    kDeactivateDirectly,
    kActivateDirectly,
    kLoseReply,
    kSlowCall
  };
  std::vector<std::uint64_t> weights = {5, 5, 2, 4, 3, 3, 3, 2, 3, 2, 5, 2};
  if (fm_unreachable_) weights[kUnreachable] = 12;  // comes back soon
  if (faults_armed_) weights[kClear] = 8;
  const std::size_t pick = rng_.Weighted(weights);
  auto count = [&] {
    return rng_.Chance(1, 10) ? fmsim::kAlways : static_cast<int>(1 + rng_.Below(3));
  };
  switch (pick) {
    case kActivateFails: {
      static const std::vector<int> codes = {-1, -2, -5, -7, -9, -10};
      const int code = rng_.Pick(codes);
      const int n = count();
      Expect(fm.InjectFailure(activate_fn_, code, n), "InjectFailure");
      faults_armed_ = true;
      Record("FM: " + Times(n) + " activations fail with " + std::to_string(code));
      break;
    }
    case kDeactivateFails: {
      static const std::vector<int> codes = {-1, -2, -4, -5, -7, -9};
      const int code = rng_.Pick(codes);
      const int n = count();
      Expect(fm.InjectFailure("fmDeactivateFabricPartition", code, n), "InjectFailure");
      faults_armed_ = true;
      Record("FM: " + Times(n) + " deactivations fail with " + std::to_string(code));
      break;
    }
    case kListFails: {
      static const std::vector<int> codes = {-2, -5, -9};
      const int code = rng_.Pick(codes);
      const int n = count();
      Expect(fm.InjectFailure("fmGetSupportedFabricPartitions", code, n), "InjectFailure");
      faults_armed_ = true;
      Record("FM: " + Times(n) + " partition listings fail with " + std::to_string(code));
      break;
    }
    case kLoseReply: {
      // FM carries the call out and the reply is lost: a timeout, or the link drops with it.
      const std::vector<const char*> functions = {
          activate_fn_, activate_fn_, "fmDeactivateFabricPartition", "fmDeactivateFabricPartition",
          "fmSetActivatedFabricPartitions"};
      static const std::vector<int> codes = {-5, -9};
      const char* function = rng_.Pick(functions);
      const int code = rng_.Pick(codes);
      const int n = static_cast<int>(1 + rng_.Below(2));
      Expect(fm.LoseReply(function, code, n), "LoseReply");
      faults_armed_ = true;
      ++stats_["lost-replies-armed"];
      Record("FM: the replies of " + Times(n) + " successful " + function + " calls are lost (" +
             std::to_string(code) + ")");
      break;
    }
    case kSlowCall: {
      const std::vector<const char*> functions = {activate_fn_, "fmDeactivateFabricPartition"};
      const char* function = rng_.Pick(functions);
      Expect(fm.DelayNext(function, 1), "DelayNext");
      faults_armed_ = true;
      slow_armed_ = true;
      ++stats_["slow-calls-armed"];
      Record(std::string("FM: the next ") + function + " does not answer within the deadline");
      break;
    }
    case kClear:
      Expect(fm.ClearFailures(), "ClearFailures");
      faults_armed_ = false;
      slow_armed_ = false;
      Record("FM: failures cleared");
      break;
    case kDrop:
      Expect(fm.DropConnections(), "DropConnections");
      Record("FM: connections dropped");
      break;
    case kUnreachable:
      fm_unreachable_ = !fm_unreachable_;
      Expect(fm.SetUnreachable(fm_unreachable_), "SetUnreachable");
      Record(fm_unreachable_ ? "FM: unreachable" : "FM: reachable again");
      break;
    case kRestartResilient:
      Expect(fm.Restart(true), "Restart");
      Record("FM: restart (resiliency: keeps partitions, awaits resync)");
      break;
    case kRestartCold:
      Expect(fm.Restart(false), "Restart");
      Record("FM: restart without resiliency (every partition lost)");
      break;
    case kDeactivateDirectly: {
      auto active = fm.ActivePartitions();
      Expect(active.status(), "ActivePartitions");
      if (failed()) return;
      if (active->empty()) {
        Record("FM drift: nothing active to deactivate");
        break;
      }
      const std::uint32_t id = rng_.Pick(*active);
      Expect(fm.DeactivateDirectly(id), "DeactivateDirectly");
      Record("FM drift: partition " + std::to_string(id) + " deactivated behind the plugin");
      break;
    }
    case kActivateDirectly: {
      // An operator activates a partition by hand: only on GPUs no pod holds and FM has free
      // (FM itself refuses overlapping activations; the control API does not check).
      auto active = fm.ActivePartitions();
      Expect(active.status(), "ActivePartitions");
      if (failed()) return;
      // FM's own table: partitions whose GPUs no pod holds and no active partition uses.
      const std::set<std::string> held = HeldDevices();
      std::set<std::uint32_t> busy = ModulesOf({held.begin(), held.end()});
      for (auto id : *active) {
        for (auto module : FmModules(id)) busy.insert(module);
      }
      std::vector<std::uint32_t> free;
      const auto& fm_state = world_->fabric().state();
      auto table = fmsim::FindTable(fm_state.table);
      Expect(table.status(), "FindTable");
      if (failed()) return;
      for (const auto& p : (*table)->partitions) {
        if (fm_state.degraded.count(p.id) > 0) continue;
        if (std::none_of(p.physical_ids.begin(), p.physical_ids.end(),
                         [&](std::uint32_t m) { return busy.count(m) > 0; })) {
          free.push_back(p.id);
        }
      }
      if (free.empty()) {
        Record("FM drift: no free partition to activate");
        break;
      }
      const std::uint32_t id = rng_.Pick(free);
      Expect(fm.ActivateDirectly(id), "ActivateDirectly");
      Record("FM drift: partition " + std::to_string(id) + " activated behind the plugin");
      break;
    }
    default:
      break;
  }
}

void Scenario::KubeletRestart() {
  world_->core().ObserveKubeletRestart("simulated kubelet restart");
  Record("kubelet restart");
}

void Scenario::PluginCrash() {
  world_->CrashPlugin();
  Expect(world_->StartPlugin(), "restart after a crash");
  ++stats_["crash"];
  Record("plugin crash + restart (start " + std::to_string(world_->plugin_starts()) + ")");
}

// A late FM call that the plugin gave up on completes in FM a little later: before the next
// step, so that the next step sees its effect (as it would in a real process, a moment later).
void Scenario::CompleteLateCalls() {
  auto& fabric = world_->fabric();
  stats_["late-calls-completed"] += fabric.LateCallsInFlight();
  fabric.CompleteLateCalls();
}

// The process dies between two steps of a saga: after the intent is durable and before the FM
// call (kBefore), or after FM carried the call out and before the outcome is durable (kAfter).
// The plugin restarts from the journal and does what leads to the call; the in-memory FM ends the
// process there (ProcessDied: nothing after that point runs, no shutdown step). Then the plugin
// restarts from the journal and FM's state, as a new process would.
void Scenario::SagaCrash() {
  const auto point = rng_.Chance(1, 2) ? fmsim::CrashPoint::kBefore : fmsim::CrashPoint::kAfter;
  const std::string when =
      point == fmsim::CrashPoint::kBefore ? "before the FM call" : "after the FM call";
  ++stats_["saga-crash"];
  switch (rng_.Weighted({4, 3, 2, 2})) {
    case 0:
      CrashDuringActivation(point, when);
      break;
    case 1:
      CrashDuringDeactivation(point, when);
      break;
    case 2:
      CrashDuringReactivation(point, when);
      break;
    default:
      CrashDuringResync(point, when);
      break;
  }
}

bool Scenario::CrashDuring(const char* function, fmsim::CrashPoint point,
                           const std::function<void()>& work) {
  world_->CrashPlugin();
  Expect(world_->fm().CrashCaller(function, point, 1), "CrashCaller");
  if (failed()) return false;
  const bool died = world_->DiedDuring([&] {
    Expect(world_->StartPlugin(), "start before a crash in a saga");
    if (!failed()) work();
  });
  // Armed for this work only: work that never reached the call leaves it armed.
  Expect(world_->fm().CrashCaller(function, point, 0), "CrashCaller (clear)");
  if (failed()) return false;
  if (died) {
    ++stats_["saga-crash-hit"];
    ++stats_[std::string("crash-") + (point == fmsim::CrashPoint::kBefore ? "before-" : "after-") +
             function];
  }
  world_->CrashPlugin();
  Expect(world_->StartPlugin(), "restart after a crash in a saga");
  return died;
}

std::string CrashOutcome(bool died) { return died ? "crashed there" : "no such call, no crash"; }

// Admission: kubelet's Allocate activates a partition; kubelet never gets the answer.
void Scenario::CrashDuringActivation(fmsim::CrashPoint point, const std::string& when) {
  const auto held = HeldDevices();
  std::vector<std::string> available;
  for (const auto& d : world_->core().Devices(world_->resource())) {
    if (d.healthy && held.count(d.id) == 0) available.push_back(d.id);
  }
  static const std::vector<std::size_t> sizes = {1, 2, 4, 8};
  const std::size_t size = rng_.Pick(sizes);
  if (available.size() < size) {
    Record("saga crash: activation: too few devices");
    return;
  }
  auto chosen = world_->core().Preferred(world_->resource(), available, {}, size);
  if (!chosen.ok() || chosen->size() != size) {
    Record("saga crash: activation: no preferred set");
    return;
  }
  const std::string name = "vm-" + std::to_string(next_vm_++);
  const std::vector<std::string> devices = *chosen;
  // kubelet's Allocate, then PreStart: either may make the activation. kubelet admits the pod
  // only when it got Allocate's answer before the process died.
  bool answered = false;
  const bool died = CrashDuring(activate_fn_, point, [&] {
    if (!world_->core().Allocate(world_->resource(), {devices}).ok()) return;
    answered = true;
    world_->core().PreStart(world_->resource(), devices).IgnoreError();
  });
  if (failed()) return;
  std::string line = "saga crash " + when + ": Allocate + PreStart " + name + " [" + Join(devices) +
                     "]: " + CrashOutcome(died);
  if (answered) {
    // kubelet got Allocate's answer: the pod is admitted and kubelet (re)starts its container.
    const std::optional<Vm> granted = GrantedVm(name, devices);
    if (!granted) return;
    vms_.push_back(*granted);
    line += ", admitted";
    StartContainer(vms_.back(), line);
  }
  Record(line);
}

// Release: a pod is gone; after the grace a reconcile deactivates its partition.
void Scenario::CrashDuringDeactivation(fmsim::CrashPoint point, const std::string& when) {
  if (vms_.empty()) {
    Record("saga crash: deactivation: no VM");
    return;
  }
  const std::size_t i = static_cast<std::size_t>(rng_.Below(vms_.size()));
  const std::string name = vms_[i].name;
  vms_.erase(vms_.begin() + static_cast<std::ptrdiff_t>(i));
  const auto interval = world_->config().reconcile_interval;
  const auto ticks = world_->config().release_grace / interval + 3;
  const auto pods = PodResources();
  const bool died = CrashDuring("fmDeactivateFabricPartition", point, [&] {
    for (std::int64_t t = 0; t < ticks; ++t) {
      world_->Advance(std::chrono::duration_cast<std::chrono::microseconds>(interval).count());
      world_->core().Reconcile(pods);
    }
  });
  if (failed()) return;
  Record("saga crash " + when + ": delete " + name +
         ", release after the grace: " + CrashOutcome(died));
}

// Drift repair: FM lost a running VM's partition; the next reconcile activates it again.
void Scenario::CrashDuringReactivation(fmsim::CrashPoint point, const std::string& when) {
  std::vector<std::size_t> running;
  for (std::size_t i = 0; i < vms_.size(); ++i) {
    if (vms_[i].running) running.push_back(i);
  }
  if (running.empty()) {
    Record("saga crash: re-activation: no running VM");
    return;
  }
  const Vm& vm = vms_[rng_.Pick(running)];
  Disturb();
  Expect(world_->fm().DeactivateDirectly(vm.partition), "DeactivateDirectly");
  if (failed()) return;
  const auto interval = world_->config().reconcile_interval;
  const auto pods = PodResources();
  const bool died = CrashDuring(activate_fn_, point, [&] {
    world_->Advance(std::chrono::duration_cast<std::chrono::microseconds>(interval).count());
    world_->core().Reconcile(pods);
  });
  if (failed()) return;
  Record("saga crash " + when + ": FM lost partition " + std::to_string(vm.partition) + " of " +
         vm.name + ", drift repair: " + CrashOutcome(died));
}

// FM restarted in resiliency mode: the starting plugin hands it the active set.
void Scenario::CrashDuringResync(fmsim::CrashPoint point, const std::string& when) {
  Disturb();
  Expect(world_->fm().Restart(true), "Restart");
  if (failed()) return;
  const bool died = CrashDuring("fmSetActivatedFabricPartitions", point, [] {});
  if (failed()) return;
  Record("saga crash " + when +
         ": FM restart (resiliency), resync at start: " + CrashOutcome(died));
}

void Scenario::HealthFlap() {
  // The devices kubelet sees and their VFIO groups: the GPUs, or the VFs on a vGPU node.
  struct Served {
    std::string bdf;
    std::string iommu_group;
  };
  std::vector<Served> served;
  for (const auto& g : world_->node().gpus) served.push_back({g.bdf, g.iommu_group});
  if (vgpu_) {
    served.clear();
    for (const auto& vf : world_->node().vfs) served.push_back({vf.bdf, vf.iommu_group});
  }
  const Served& gpu = served[static_cast<std::size_t>(rng_.Below(served.size()))];
  std::string line;
  if (!removed_groups_.empty() && rng_.Chance(3, 5)) {
    // Mostly the node heals: one of the missing nodes comes back.
    const std::vector<std::string> removed(removed_groups_.begin(), removed_groups_.end());
    const std::string group = rng_.Pick(removed);
    Expect(world_->node().RecreateVfioGroupNode(group), "RecreateVfioGroupNode");
    removed_groups_.erase(group);
    line = "health: /dev/vfio/" + group + " back";
  } else if (removed_groups_.count(gpu.iommu_group)) {
    Expect(world_->node().RecreateVfioGroupNode(gpu.iommu_group), "RecreateVfioGroupNode");
    removed_groups_.erase(gpu.iommu_group);
    line = "health: /dev/vfio/" + gpu.iommu_group + " back (" + gpu.bdf + ")";
  } else {
    Expect(world_->node().RemoveVfioGroupNode(gpu.iommu_group), "RemoveVfioGroupNode");
    removed_groups_.insert(gpu.iommu_group);
    line = "health: /dev/vfio/" + gpu.iommu_group + " gone (" + gpu.bdf + ")";
  }
  if (failed()) return;
  world_->core().CheckHealth();
  Record(line);
}

// Every pod goes, FM heals, the release grace passes with reconciles: nothing may stay active.
void Scenario::Drain() {
  auto& fm = world_->fm();
  Expect(fm.ClearFailures(), "ClearFailures");
  faults_armed_ = false;
  slow_armed_ = false;
  if (fm_unreachable_) Expect(fm.SetUnreachable(false), "SetUnreachable");
  fm_unreachable_ = false;
  for (const auto& group : removed_groups_) {
    Expect(world_->node().RecreateVfioGroupNode(group), "RecreateVfioGroupNode");
  }
  removed_groups_.clear();
  if (failed()) return;
  world_->core().CheckHealth();
  vms_.clear();
  Record("drain: every pod deleted, FM healed");
  const auto interval = world_->config().reconcile_interval;
  const auto ticks = world_->config().release_grace / interval + 3;
  for (std::int64_t i = 0; i < ticks && !failed(); ++i) {
    ReconcileTick();
    CheckAll();
  }
  if (failed()) return;
  ++stats_["drain"];
  const auto s = world_->core().engine().CopyState();
  auto fm_active = fm.ActivePartitions();
  Expect(fm_active.status(), "ActivePartitions");
  if (failed()) return;
  std::set<sm::PartitionId> journal_active;
  for (const auto& [id, a] : s.active) journal_active.insert(id);
  if (!fm_active->empty() || !journal_active.empty()) {
    Fail("after the drain FM has " + JoinIds(*fm_active) + " active and the journal " +
         JoinIds(journal_active) + " (both should be empty)");
    return;
  }
  if (!s.intents.empty() || !s.allocations.empty()) {
    Fail("after the drain the journal still has " + std::to_string(s.intents.size()) +
         " pending intents and " + std::to_string(s.allocations.size()) + " live allocations");
    return;
  }
  auto mode = fm.GetMode();
  if (mode.ok() && *mode != fmsim::Mode::kRunning) {
    Fail(std::string("after the drain FM is still ") + std::string(fmsim::ModeName(*mode)));
  }
}

// ------------------------------------------------------------------------------------------

void Scenario::CheckAll() {
  if (failed()) return;
  if (!world_->plugin_up()) {
    Fail("the plugin is down");
    return;
  }
  auto& engine = world_->core().engine();
  const sm::State s = engine.CopyState();

  // 1. Invariants of the live state.
  if (Status inv = sm::CheckInvariants(s); !inv.ok()) {
    Fail("state invariant violated: " + inv.message());
    return;
  }

  // 5. The journal replays to the live state.
  auto replayed = engine::Replay(engine.journal(), 0, /*use_snapshots=*/false,
                                 /*check_invariants=*/true);
  if (!replayed.ok()) {
    Fail("replay from seq 1 failed: " + replayed.status().message());
    return;
  }
  if (!(*replayed == s)) {
    Fail("replay from seq 1 (last seq " + std::to_string(replayed->last_seq) +
         ") differs from the live state (last seq " + std::to_string(s.last_seq) + ")");
    return;
  }

  // 3. The plugin never deactivated the partition of a running VM.
  auto& fm = world_->fm();
  auto calls = fm.CallLog();
  Expect(calls.status(), "CallLog");
  if (failed()) return;
  Expect(fm.ClearCallLog(), "ClearCallLog");
  for (const auto& call : *calls) {
    ++stats_["fm-calls"];
    if (call.code != 0) ++stats_["fm-calls-failed"];
    if (call.function != "fmDeactivateFabricPartition" || call.code != 0) continue;
    const auto id = static_cast<sm::PartitionId>(std::strtoul(call.args.c_str(), nullptr, 10));
    for (const auto& vm : vms_) {
      // A VM that started running during this step was not running when the call was made.
      if (vm.running && vm.running_since < step_ && vm.partition == id) {
        Fail("the plugin deactivated partition " + std::to_string(id) + " in FM while " + vm.name +
             " [" + Join(vm.devices) + "] runs on it");
        return;
      }
    }
  }

  // 2. Settled: every running VM sits on its own active, owned partition, in FM too.
  if (settled_) {
    ++stats_["settled-checks"];
    auto fm_active = fm.ActivePartitions();
    Expect(fm_active.status(), "ActivePartitions");
    if (failed()) return;
    CheckRunningVmsPartitioned(s, *fm_active);
  }
}

void Scenario::CheckRunningVmsPartitioned(const sm::State& s,
                                          const std::vector<std::uint32_t>& fm_active) {
  const std::set<std::uint32_t> fm_set(fm_active.begin(), fm_active.end());
  for (auto& vm : vms_) {
    if (!vm.running) continue;
    ++stats_["settled-vm-checks"];
    const std::string who = vm.name + " [" + Join(vm.devices) + "]";
    const auto pid = world_->FmPartitionOf(vm.devices);
    if (!pid || *pid != vm.partition) {
      Fail(who + ": its devices are no longer exactly partition " + std::to_string(vm.partition) +
           " of FM's table");
      return;
    }
    auto active = s.active.find(*pid);
    if (active == s.active.end()) {
      Fail(who + ": partition " + std::to_string(*pid) + " is not active in the journal");
      return;
    }
    if (active->second.owner.empty()) {
      Fail(who + ": partition " + std::to_string(*pid) + " is active but has no owner" +
           (active->second.adopted ? " (adopted)" : ""));
      return;
    }
    auto alloc = s.allocations.find(active->second.owner);
    if (alloc == s.allocations.end() || !alloc->second.live()) {
      Fail(who + ": partition " + std::to_string(*pid) + " is owned by " + active->second.owner +
           ", which is not a live allocation");
      return;
    }
    const std::set<std::string> mine(vm.devices.begin(), vm.devices.end());
    const std::set<std::string> theirs(alloc->second.devices.begin(), alloc->second.devices.end());
    if (mine != theirs) {
      Fail(who + ": partition " + std::to_string(*pid) + " is owned by " + alloc->first +
           " with other devices [" + Join(alloc->second.devices) + "]");
      return;
    }
    const std::set<std::uint32_t> vm_modules = ModulesOf(vm.devices);
    for (const auto& [other, a] : s.active) {
      if (other == *pid) continue;
      for (auto module : FmModules(other)) {
        if (vm_modules.count(module)) {
          Fail(who + ": partition " + std::to_string(other) + " is active too and shares GPU " +
               std::to_string(module));
          return;
        }
      }
    }
    if (fm_set.count(*pid) == 0) {
      Fail(who + ": partition " + std::to_string(*pid) +
           " is active in the journal but not in FM " + JoinIds(fm_set));
      return;
    }
  }
  std::set<std::uint32_t> journal_set;
  for (const auto& [id, a] : s.active) journal_set.insert(id);
  if (journal_set != fm_set) {
    Fail("settled, yet FM's active set " + JoinIds(fm_set) + " differs from the journal's " +
         JoinIds(journal_set));
  }
}

// A running VM's allocation is live and still names its partition, but the partition is active
// neither in the journal nor (so no drift is seen) necessarily in FM: nothing will re-activate it.
// ------------------------------------------------------------------------------------------

void Scenario::Record(const std::string& line) {
  const std::string full = "step " + std::to_string(step_) + ": " + line;
  if (trace_)
    std::fprintf(stderr, "[seed %llu] %s\n", static_cast<unsigned long long>(seed_), full.c_str());
  history_.push_back(full);
  if (history_.size() > kHistoryLines) history_.pop_front();
}

void Scenario::Expect(const Status& status, const std::string& what) {
  if (!status.ok()) Fail(what + ": " + status.message());
}

void Scenario::Fail(const std::string& what) {
  if (failed()) return;
  std::ostringstream out;
  out << "GFP_SIM_SEED=" << seed_ << " step " << step_ << " of " << steps_ << ": " << what
      << "\n  replay: GFP_SIM_SEED=" << seed_ << " GFP_SIM_STEPS=" << steps_
      << " ./simulation_plugin_test   (KEEP_TEST_DIRS=1 keeps " << dir_.string() << ")"
      << "\n  FM " << (fm_unreachable_ ? "unreachable" : "reachable")
      << (faults_armed_ ? ", faults armed" : "") << (settled_ ? ", settled" : ", not settled")
      << "; VMs:";
  for (const auto& vm : vms_) {
    out << " " << vm.name << (vm.running ? "" : "(pending)") << "=p" << vm.partition;
  }
  out << "\n  last steps:";
  for (const auto& line : history_) out << "\n    " << line;
  failure_ = out.str();
}

// ------------------------------------------------------------------------------------------

// The default seeds are dealt to kShards tests (seed i to shard i % kShards), so that ctest runs
// them side by side instead of one long test finishing alone at the end. Seeds given through
// GFP_SIM_SEED all run in shard 0.
constexpr int kShards = 4;

std::vector<std::uint64_t> SeedsOfShard(int shard) {
  std::vector<std::uint64_t> seeds;
  if (const char* first = std::getenv("GFP_SIM_SEED"); first != nullptr && *first != '\0') {
    if (shard != 0) return seeds;
    const std::uint64_t start = std::strtoull(first, nullptr, 10);
    const std::uint64_t count = EnvU64("GFP_SIM_SEEDS", 1);
    for (std::uint64_t i = 0; i < count; ++i) seeds.push_back(start + i);
    return seeds;
  }
  const std::uint64_t count = EnvU64("GFP_SIM_SEEDS", kDefaultSeedCount);
  for (std::uint64_t i = static_cast<std::uint64_t>(shard); i < count; i += kShards) {
    seeds.push_back(i < std::size(kDefaultSeeds) ? kDefaultSeeds[i] : 1000 + i);
  }
  return seeds;
}

class PluginSimulation : public ::testing::TestWithParam<int> {};

TEST_P(PluginSimulation, SeededScenarios) {
  if (std::getenv("GFP_SIM_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  // The journal's fsyncs (synchronous=FULL) are most of a scenario's time on a disk and prove
  // nothing here (power cuts are another suite's): run in tmpfs unless TMPDIR says otherwise.
  if (std::getenv("TMPDIR") == nullptr && ::access("/dev/shm", W_OK) == 0) {
    ::setenv("TMPDIR", "/dev/shm", 1);
  }
  const int steps = static_cast<int>(EnvU64("GFP_SIM_STEPS", kDefaultSteps));
  const std::vector<std::uint64_t> seeds = SeedsOfShard(GetParam());
  if (seeds.empty()) GTEST_SKIP() << "GFP_SIM_SEED runs in shard 0";
  // Each seed twice, in the same folder (the journal names its files): the same seed must leave
  // the same journal, byte for byte (its chain head covers every event's bytes and time).
  const bool twice = std::getenv("GFP_SIM_ONCE") == nullptr && !testing::kSanitizerBuild;
  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> failing;
  std::map<std::string, long long> totals;
  for (const auto seed : seeds) {
    testing::TempDir dir;
    ASSERT_FALSE(dir.path().empty());
    std::string first_head;
    for (int run = 0; run < (twice ? 2 : 1); ++run) {
      if (run == 1) {
        std::filesystem::remove_all(dir.path());
        std::filesystem::create_directories(dir.path());
      }
      Scenario scenario(seed, steps, dir.path());
      const std::string failure = scenario.Run();
      if (run == 0) {
        for (const auto& [k, v] : scenario.stats()) totals[k] += v;
      }
      if (!failure.empty()) {
        failing.push_back(seed);
        ADD_FAILURE() << failure;
        break;
      }
      if (run == 0) {
        first_head = scenario.chain_head();
      } else if (scenario.chain_head() != first_head) {
        failing.push_back(seed);
        ADD_FAILURE() << "GFP_SIM_SEED=" << seed << " GFP_SIM_STEPS=" << steps
                      << ": not deterministic: the first run's journal ended at head " << first_head
                      << ", the second's at " << scenario.chain_head();
        break;
      }
    }
    if (std::getenv("GFP_SIM_TRACE") != nullptr) {
      std::fprintf(stderr, "seed %llu head %s\n", static_cast<unsigned long long>(seed),
                   first_head.c_str());
    }
  }
  const auto total = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - begin)
                         .count();
  std::string failing_list;
  for (auto s : failing) failing_list += " " + std::to_string(s);
  std::printf("simulation: %zu seeds x %d steps%s in %lld ms; %zu failed%s\n", seeds.size(), steps,
              twice ? ", each run twice" : "", static_cast<long long>(total), failing.size(),
              failing_list.c_str());
  std::string counts;
  for (const auto& [k, v] : totals) counts += " " + k + "=" + std::to_string(v);
  std::printf("simulation counts:%s\n", counts.c_str());
}

INSTANTIATE_TEST_SUITE_P(Shards, PluginSimulation, ::testing::Range(0, kShards));

}  // namespace
}  // namespace gfp::simtest
