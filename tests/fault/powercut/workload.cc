#include "fault/powercut/workload.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "common/fault_vfs.h"
#include "engine/engine.h"

namespace gfp::faulttest {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

std::set<std::string> LiveAllocations(const sm::State& s) {
  std::set<std::string> out;
  for (const auto& [id, a] : s.allocations) {
    if (a.live()) out.insert(id);
  }
  return out;
}

}  // namespace

const char* KindName(Acknowledged::Kind kind) {
  switch (kind) {
    case Acknowledged::Kind::kGrant:
      return "grant";
    case Acknowledged::Kind::kRefusal:
      return "refusal";
    case Acknowledged::Kind::kRelease:
      return "release";
  }
  return "?";
}

Workload::Workload(std::uint64_t seed, std::filesystem::path dir, int steps)
    : dir_(std::move(dir)), steps_(steps), rng_state_(seed * 0x9E3779B97F4A7C15ULL) {}

// splitmix64: fixed by its definition, so a seed is the same workload everywhere.
std::uint64_t Workload::Next() {
  std::uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::string Workload::Where() const {
  return "step " + std::to_string(at_step_) + " of " + std::to_string(steps_) + " (" + step_name_ +
         ")";
}

std::vector<adapters::kubelet::ContainerDeviceAssignment> Workload::PodResources() const {
  std::vector<adapters::kubelet::ContainerDeviceAssignment> out;
  for (const auto& vm : vms_) {
    out.push_back({"default", vm.name, "compute", world_->resource(), vm.devices});
  }
  return out;
}

Status Workload::Run(const std::function<void(const std::vector<CallResult>&)>& after_step) {
  simworld::DeterministicOptions options;
  options.dir = dir_;
  options.reconcile_interval = std::chrono::milliseconds(1000);
  options.release_grace = std::chrono::milliseconds(2000);
  auto world = simworld::DeterministicWorld::Create(options);
  if (!world.ok()) return world.status().WithContext("DeterministicWorld::Create");
  world_ = std::move(world).value();
  StartPlugin("first start");
  if (after_step) after_step(calls_);
  for (step_ = 1; step_ <= steps_ + 1 && !testing::fault::PoweredOff(); ++step_) {
    calls_.clear();
    at_step_ = step_;
    if (step_ > steps_) {
      step_name_ = "drain: every pod deleted";
      vms_.clear();
      for (int i = 0; i < 4; ++i) ReconcileTick();
    } else {
      Step();
    }
    if (after_step) after_step(calls_);
  }
  return Status::Ok();
}

void Workload::Step() {
  if (!up()) {
    StartPlugin("start after a failed start");
    return;
  }
  step_name_ = "reconcile";
  const std::uint64_t pick = Below(100);
  if (pick < 35) return Admit();
  if (pick < 55) return DeleteAndRelease();
  if (pick < 65) return ReconcileTick();
  if (pick < 78) return Drift();
  if (pick < 86) return FmRestart();
  if (pick < 93) return TakeSnapshot();
  return RestartPlugin();
}

void Workload::Note(const std::string& call, const Status& status) {
  const std::uint64_t fired = testing::fault::FaultsFired();
  calls_.push_back({call, status, fired != faults_seen_});
  RecordState();
}

void Workload::RecordState() {
  faults_seen_ = testing::fault::FaultsFired();
  if (up()) acked_state_ = world_->core().engine().CopyState();
}

void Workload::Acknowledge(Acknowledged::Kind kind, const std::string& what) {
  acked_.push_back({kind, world_->core().engine().journal().LastSeq(), what, at_step_});
}

void Workload::StartPlugin(const char* why) {
  step_name_ = why;
  if (up()) return;
  Status started = world_->StartPlugin();
  Note("StartPlugin", started);
  // A failed start is retried once, as Kubernetes restarts the pod (an I/O error is one-shot).
  if (!started.ok() && !testing::fault::PoweredOff()) Note("StartPlugin", world_->StartPlugin());
}

void Workload::Admit() {
  const std::string name = "vm-" + std::to_string(next_vm_++);
  static const std::size_t kSizes[] = {1, 2, 2, 4, 4, 8};
  const std::size_t size = kSizes[Below(std::size(kSizes))];
  step_name_ = "admit " + name + " (" + std::to_string(size) + " GPUs)";
  auto& core = world_->core();
  std::set<std::string> held;
  for (const auto& vm : vms_) held.insert(vm.devices.begin(), vm.devices.end());
  std::vector<std::string> available;
  for (const auto& d : core.Devices(world_->resource())) {
    if (d.healthy && held.count(d.id) == 0) available.push_back(d.id);
  }
  if (available.size() < size) return;
  auto preferred = core.Preferred(world_->resource(), available, {}, size);
  if (!preferred.ok() || preferred->size() != size) return;
  const std::uint64_t faults_before = testing::fault::FaultsFired();
  auto allocated = core.Allocate(world_->resource(), {*preferred});
  Note("Allocate", allocated.status());
  const std::string devices = "[" + Join(*preferred) + "]";
  if (!allocated.ok()) {
    // Refused while the power was on and the journal worked: a decision kubelet saw.
    if (!testing::fault::PoweredOff() && testing::fault::FaultsFired() == faults_before)
      Acknowledge(Acknowledged::Kind::kRefusal, "refusal " + devices);
    return;
  }
  Acknowledge(Acknowledged::Kind::kGrant, "grant " + devices);
  vms_.push_back({name, *preferred});
  Note("PreStart", core.PreStart(world_->resource(), *preferred));
}

void Workload::DeleteAndRelease() {
  if (vms_.empty()) return ReconcileTick();
  const std::size_t i = static_cast<std::size_t>(Below(vms_.size()));
  step_name_ = "delete " + vms_[i].name + " and reconcile past the grace";
  vms_.erase(vms_.begin() + static_cast<std::ptrdiff_t>(i));
  for (int tick = 0; tick < 4 && up(); ++tick) ReconcileTick();
}

void Workload::ReconcileTick() {
  if (!up()) return;
  world_->Advance(1'000'000);
  auto& engine = world_->core().engine();
  const auto before = engine.Read([](const sm::State& s) { return LiveAllocations(s); });
  world_->core().Reconcile(PodResources());
  RecordState();
  const auto after = engine.Read([](const sm::State& s) { return LiveAllocations(s); });
  for (const auto& id : before) {
    if (after.count(id) == 0) Acknowledge(Acknowledged::Kind::kRelease, "release " + id);
  }
}

void Workload::Drift() {
  auto& fm = world_->fm();
  auto active = fm.ActivePartitions();
  if (!active.ok()) return;
  if (!active->empty() && Below(2) == 0) {
    const std::uint32_t id = (*active)[Below(active->size())];
    step_name_ = "drift: partition " + std::to_string(id) + " deactivated behind the plugin";
    fm.DeactivateDirectly(id).IgnoreError();
  } else {
    // An operator activates a partition whose GPUs no pod holds and FM has free.
    const sm::State s = world_->core().engine().CopyState();
    std::set<std::string> busy;
    for (const auto& vm : vms_) busy.insert(vm.devices.begin(), vm.devices.end());
    for (auto id : *active) {
      auto it = s.partitions.find(id);
      if (it == s.partitions.end()) continue;
      for (const auto& d : sm::DevicesOfPartition(s, it->second).bdfs) busy.insert(d);
    }
    std::vector<std::uint32_t> free;
    for (const auto& [id, p] : s.partitions) {
      const auto devices = sm::DevicesOfPartition(s, p).bdfs;
      if (devices.empty() || p.degraded()) continue;
      if (std::none_of(devices.begin(), devices.end(),
                       [&](const std::string& d) { return busy.count(d) > 0; })) {
        free.push_back(id);
      }
    }
    if (free.empty()) return ReconcileTick();
    const std::uint32_t id = free[Below(free.size())];
    step_name_ = "drift: partition " + std::to_string(id) + " activated behind the plugin";
    fm.ActivateDirectly(id).IgnoreError();
  }
  ReconcileTick();
}

void Workload::FmRestart() {
  const bool resilient = Below(2) == 0;
  step_name_ = resilient ? "FM restart (resiliency)" : "FM restart (partitions lost)";
  world_->fm().Restart(resilient).IgnoreError();
  ReconcileTick();
}

void Workload::TakeSnapshot() {
  step_name_ = "snapshot";
  Note("Snapshot", world_->core().engine().Snapshot());
}

void Workload::RestartPlugin() {
  step_name_ = "plugin restart";
  world_->CrashPlugin();  // destroys the core: the journal checkpoints on close
  StartPlugin("plugin restart");
}

}  // namespace gfp::faulttest
