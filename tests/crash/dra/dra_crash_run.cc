#include "tests/crash/dra/dra_crash_run.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/strings.h"
#include "tests/common/sanitizer_build.h"

namespace gfp::crashtest {
namespace {

using namespace std::chrono_literals;

constexpr const char* kDriver = "gpu-fabric-plugin.io";
constexpr const char* kNode = "node-a";
constexpr int kHoldMs = 60'000;  // holds a call until the kill, far longer than any wait here

// An error text kept short for the trace.
std::string Short(const std::string& text) {
  return text.size() <= 160 ? text : text.substr(0, 160) + "...";
}

std::string Names(const std::vector<kubelet::DraDeviceAnswer>& devices) {
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.device_name);
  return "[" + Join(names) + "]";
}

}  // namespace

DraCrashRun::DraCrashRun(std::uint64_t seed, const std::filesystem::path& dir)
    : rng_{std::mt19937_64(seed)}, scheduler_(kDriver, kNode) {
  simworld::ProcessWorldOptions options;
  options.dir = dir;
  options.fm_library = GFP_SIM_LIBRARY;
  options.plugin_binary = GFP_BINARY;
  options.reconcile_interval = 100ms;
  options.release_grace = 400ms;
  options.node_name = kNode;
  options.dra = true;
  static constexpr sim::NodePreset kPresets[] = {
      sim::NodePreset::kHgxH100, sim::NodePreset::kHgxB200, sim::NodePreset::kHgxA100x16};
  options.node.preset = kPresets[rng_.Below(std::size(kPresets))];
  options.node.with_iommufd = rng_.Below(2) == 1;
  Trace("node: " + options.node.Name() + (options.node.with_iommufd ? " with iommufd" : ""));
  auto created = simworld::ProcessWorld::Create(options);
  EXPECT_TRUE(created.ok()) << created.status().message();
  if (created.ok()) world_ = std::move(created).value();
}

void DraCrashRun::Run(std::uint64_t rounds) {
  ASSERT_TRUE(world_);
  ASSERT_TRUE(world_->StartPlugin().ok());
  const Status ready = world_->WaitDraRegisteredAndPublished();
  ASSERT_TRUE(ready.ok()) << ready.message() << SeeLog();
  for (std::uint64_t round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Trace("round " + std::to_string(round));
    ASSERT_NO_FATAL_FAILURE(Round());
  }
  ASSERT_NO_FATAL_FAILURE(Drain());
}

void DraCrashRun::Round() {
  const std::uint64_t ops = 2 + rng_.Below(4);
  for (std::uint64_t i = 0; i < ops; ++i) {
    ASSERT_NO_FATAL_FAILURE(Operation());
    ASSERT_NO_FATAL_FAILURE(CheckHeld());
  }
  ASSERT_NO_FATAL_FAILURE(Settle());
}

void DraCrashRun::Operation() {
  // Weights: new 3, repeat 1, unprepare 2, orphan 1, kill 3, api 1, wipe 1.
  static constexpr int kOps[] = {0, 0, 0, 1, 2, 2, 3, 4, 4, 4, 5, 6};
  switch (kOps[rng_.Below(std::size(kOps))]) {
    case 0: {
      std::string uid = NewClaim();
      if (uid.empty() && !held_.empty()) {  // full: a VM goes away first
        Unprepare();
        uid = NewClaim();
      }
      if (!uid.empty()) PrepareHeld(uid, "");
      return;
    }
    case 1:
      return RepeatPrepare();
    case 2:
      return Unprepare();
    case 3:
      return Orphan();
    case 4:
      return Kill();
    case 5:
      return ApiTrouble();
    default:
      return Wipe();
  }
}

// kubelet repeats a Prepare; half the time the claim's CDI specs were lost first (a tmpfs
// /var/run/cdi after a reboot, an operator's cleanup): the repeat must put them back.
void DraCrashRun::RepeatPrepare() {
  const std::string uid = PickHeld(true);
  if (uid.empty()) return;
  if (rng_.Below(2)) {
    std::error_code ec;
    int removed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(world_->setup().cdi_dir(), ec)) {
      if (entry.path().filename().string().find(uid) == std::string::npos) continue;
      removed += std::filesystem::remove(entry.path(), ec) ? 1 : 0;
    }
    Trace("  " + std::to_string(removed) + " CDI specs of " + held_.at(uid).ref.name + " lost");
  }
  EXPECT_TRUE(PrepareHeld(uid, "repeated")) << "a repeated Prepare failed" << SeeLog();
}

std::string DraCrashRun::NewClaim() {
  static constexpr std::size_t kSizes[] = {1, 1, 2, 2, 4, 8};
  const std::size_t gpus = kSizes[rng_.Below(std::size(kSizes))];
  const std::string name = "vm-" + std::to_string(next_claim_++);
  simworld::ClaimRequest request;
  request.name = name + "-gpus";
  request.gpus = gpus;
  request.pod = "virt-launcher-" + name;
  if (rng_.Below(2)) request.pod_claim_name = "gpus";
  auto claim = scheduler_.Allocate(request, world_->api().Slices());
  if (!claim.ok()) {
    Trace("  schedule " + request.name + " (fm-" + std::to_string(gpus) + "gpu): no room");
    return "";
  }
  auto stored = world_->api().PutClaim(*claim);
  EXPECT_TRUE(stored.ok()) << stored.status().message();
  if (!stored.ok()) return "";
  Held held;
  held.object = *stored;
  held.ref = {(*stored)["metadata"]["uid"], "vms", request.name};
  Trace("  schedule " + request.name + " (fm-" + std::to_string(gpus) + "gpu)");
  held_[held.ref.uid] = held;
  return held.ref.uid;
}

// One NodePrepareResources for a held claim, as kubelet sends it.
bool DraCrashRun::PrepareHeld(const std::string& uid, const std::string& why) {
  Held& held = held_.at(uid);
  auto out = world_->dra_kubelet().Prepare({held.ref});
  std::string line = "  " + (why.empty() ? "" : why + " ") + "prepare " + held.ref.name + ": ";
  if (!out.ok()) {
    Trace(line + "gRPC " + std::to_string(out.status.error_code()) + " " +
          Short(out.status.error_message()));
    return false;
  }
  const auto answer = out.response.find(uid);
  if (answer == out.response.end()) {
    ADD_FAILURE() << "Prepare answered no entry for claim " << uid;
    return false;
  }
  if (!answer->second.error.empty()) {
    Trace(line + "error: " + Short(answer->second.error));
    return false;
  }
  if (held.answered) {
    EXPECT_EQ(answer->second.devices, held.devices)
        << "a repeated Prepare of " << held.ref.name << " answered other devices";
  } else {
    held.answered = true;
    held.devices = answer->second.devices;
    // Counted from the answer: while this Prepare waited for the lock, the unprepare of an
    // earlier claim on the same GPUs may have deactivated this very partition id. CheckHeld's
    // look at FM's active set covers the instant before the log is read.
    auto calls = world_->fabric().CallLog();
    EXPECT_TRUE(calls.ok());
    held.fm_calls_after = calls.ok() ? calls->size() : 0;
  }
  Trace(line + "prepared " + Names(answer->second.devices));
  return true;
}

// One NodeUnprepareResources for a claim kubelet is unpreparing; true when done.
bool DraCrashRun::UnprepareClaim(const std::string& uid, const std::string& why) {
  const Held& claim = unpreparing_.at(uid);
  const std::string line =
      "  " + (why.empty() ? "" : why + " ") + "unprepare " + claim.ref.name + ": ";
  auto out = world_->dra_kubelet().Unprepare({claim.ref});
  if (!out.ok()) {
    Trace(line + "gRPC " + std::to_string(out.status.error_code()) + " " +
          Short(out.status.error_message()));
    return false;
  }
  const auto answer = out.response.find(uid);
  if (answer == out.response.end() || !answer->second.error.empty()) {
    Trace(line +
          "error: " + (answer == out.response.end() ? "no entry" : Short(answer->second.error)));
    return false;
  }
  Trace(line + "done");
  EXPECT_FALSE(std::filesystem::exists(CdiFile(uid)))
      << claim.ref.name << "'s CDI file is still there after its Unprepare";
  unpreparing_.erase(uid);
  return true;
}

void DraCrashRun::StartUnprepare(const std::string& uid) {
  Held held = held_.at(uid);
  held_.erase(uid);
  world_->api().DeleteClaim(held.ref.namespace_name, held.ref.name);
  scheduler_.Release(held.object);
  unpreparing_[uid] = std::move(held);
}

void DraCrashRun::Unprepare() {
  const std::string uid = PickHeld(false);
  if (uid.empty()) return;
  StartUnprepare(uid);
  UnprepareClaim(uid, "");
}

// Deleted while serve is down, and forgotten by kubelet (its checkpoint lost): serve's
// reconciliation must unprepare it after the grace (Settled waits for that).
void DraCrashRun::Orphan() {
  const std::string uid = PickHeld(true);
  if (uid.empty()) return;
  ASSERT_TRUE(world_->CrashPlugin().ok()) << SeeLog();
  const Held held = held_.at(uid);
  held_.erase(uid);
  world_->api().DeleteClaim(held.ref.namespace_name, held.ref.name);
  scheduler_.Release(held.object);
  Trace("  SIGKILL; delete " + held.ref.name + " while serve is down (kubelet forgets it)");
  ASSERT_NO_FATAL_FAILURE(Restart());
}

std::string DraCrashRun::PickHeld(bool answered_only) {
  std::vector<std::string> uids;
  for (const auto& [uid, held] : held_) {
    if (held.answered || !answered_only) uids.push_back(uid);
  }
  return uids.empty() ? "" : uids[rng_.Below(uids.size())];
}

std::filesystem::path DraCrashRun::CdiFile(const std::string& uid) const {
  return world_->setup().cdi_dir() / (std::string(kDriver) + "_" + uid + ".json");
}

void DraCrashRun::Kill() {
  const std::uint64_t variant = rng_.Below(6);
  if (variant == 0) {
    ASSERT_TRUE(world_->CrashPlugin().ok()) << SeeLog();
    Trace("  SIGKILL idle");
  } else if (variant == 1 && !testing::kThreadSanitizerBuild) {
    ASSERT_NO_FATAL_FAILURE(KillInActivation());
  } else if (variant == 1) {
    // ThreadSanitizer intercepts the simulator's _exit and reports serve's finished journal
    // verification thread as leaked; a real crash is a SIGKILL, which it does not see.
    ASSERT_NO_FATAL_FAILURE(KillWhileHeld(2));
  } else if (variant == 5) {
    ASSERT_NO_FATAL_FAILURE(KillAtRandomInstant());
  } else {
    ASSERT_NO_FATAL_FAILURE(KillWhileHeld(static_cast<int>(variant)));
  }
  ASSERT_NO_FATAL_FAILURE(Restart());
}

// The FM simulator ends serve inside fmActivateFabricPartition, before or after FM acts.
void DraCrashRun::KillInActivation() {
  const auto point = rng_.Below(2) ? fmsim::CrashPoint::kAfter : fmsim::CrashPoint::kBefore;
  const std::string uid = NewClaim();
  if (uid.empty()) {
    ASSERT_TRUE(world_->CrashPlugin().ok()) << SeeLog();
    Trace("  SIGKILL idle");
    return;
  }
  ASSERT_TRUE(world_->fabric().CrashCaller(kFmActivate, point, 1, world_->serve()->pid()).ok());
  PrepareHeld(uid, "");
  const bool ended =
      process::WaitUntil([&] { return world_->PluginExited().has_value(); }, 5s, 5ms);
  ASSERT_TRUE(world_->fabric().ClearFailures().ok());
  if (ended) {
    Trace(std::string("  serve ended by FM inside ") + kFmActivate +
          (point == fmsim::CrashPoint::kAfter ? " after" : " before") + " FM acted");
  } else {  // the Prepare made no activation (refused first): kill it now
    ASSERT_TRUE(world_->CrashPlugin().ok()) << SeeLog();
    Trace("  SIGKILL idle (the Prepare reached no activation)");
  }
}

// SIGKILL a few milliseconds into a new claim's Prepare: the seed picks the delay, the instant
// lands on whichever step (GET, journal appends, FM call, files) the Prepare has reached.
void DraCrashRun::KillAtRandomInstant() {
  const auto after = std::chrono::milliseconds(rng_.Below(25));
  const std::string uid = NewClaim();
  std::atomic<bool> done{false};
  std::thread call([&] {
    if (!uid.empty()) PrepareHeld(uid, "");
    done = true;
  });
  std::this_thread::sleep_for(after);
  const bool in_call = !done;
  const Status killed = world_->CrashPlugin();
  call.join();
  ASSERT_TRUE(killed.ok()) << killed.message() << SeeLog();
  Trace("  SIGKILL " + std::to_string(after.count()) + " ms into the Prepare" +
        (in_call ? "" : " (it had ended)"));
}

// SIGKILL while a call is held: 2 the activation of a new claim's Prepare, 3 the deactivation of
// an Unprepare, 4 a new claim's GET (every claim GET is held; the request log records a request
// only once answered, so the kill comes 200 ms into the Prepare, which GETs at once).
void DraCrashRun::KillWhileHeld(int variant) {
  if (variant == 3 && PickHeld(true).empty()) variant = 2;
  std::string uid = variant == 3 ? PickHeld(true) : NewClaim();
  if (uid.empty()) {
    ASSERT_TRUE(world_->CrashPlugin().ok()) << SeeLog();
    Trace("  SIGKILL idle");
    return;
  }
  if (variant == 2) {
    ASSERT_TRUE(world_->fabric().DelayNext(kFmActivate, kHoldMs).ok());
  }
  if (variant == 3) {
    StartUnprepare(uid);
    ASSERT_TRUE(world_->fabric().DelayNext(kFmDeactivate, kHoldMs).ok());
  }
  if (variant == 4) {
    world_->api().AddFault({"get", "resourceclaims", apisim::FaultKind::kDelay, 0, 3s, -1});
  }
  std::atomic<bool> done{false};
  std::thread call([&] {
    if (variant == 3) {
      UnprepareClaim(uid, "");
    } else {
      PrepareHeld(uid, "");
    }
    done = true;
  });
  const bool held = process::WaitUntil(
      [&] {
        if (done) return true;
        if (variant == 4) return false;
        auto delayed = world_->fabric().DelayedCallsInFlight();
        return delayed.ok() && *delayed > 0;
      },
      variant == 4 ? 200ms : 10s, 2ms);
  const bool in_call = !done && (held || variant == 4);
  const Status killed = world_->CrashPlugin();
  call.join();
  EXPECT_TRUE(world_->fabric().ClearFailures().ok());
  world_->api().ClearFaults();
  ASSERT_TRUE(killed.ok()) << killed.message() << SeeLog();
  static constexpr const char* kWhat[] = {"", "", "an activation", "a deactivation", "a GET"};
  Trace(std::string("  SIGKILL while ") + kWhat[variant] + " was held" +
        (in_call ? "" : " (the call had ended)"));
}

// API server trouble on the claims' GETs (or everything) for longer than the grace, while a new
// claim is prepared: nothing may be unprepared for want of an answer.
void DraCrashRun::ApiTrouble() {
  const std::uint64_t variant = rng_.Below(5);
  const auto duration = std::chrono::milliseconds(1000 + 100 * rng_.Below(10));
  apisim::Fault fault{"get", "resourceclaims", apisim::FaultKind::kStatus, 500, {}, -1};
  std::string what;
  switch (variant) {
    case 0:
      what = "500 on every request";
      fault.verb = fault.resource = "*";
      break;
    case 1:
      what = "dropped connections on claim GETs";
      fault.kind = apisim::FaultKind::kDrop;
      break;
    case 2:
      what = "garbage answers to claim GETs";
      fault.kind = apisim::FaultKind::kGarbage;
      break;
    case 3:
      what = "slow answers (300 ms) to everything";
      fault = {"*", "*", apisim::FaultKind::kDelay, 0, 300ms, -1};
      break;
    default:
      what = "403 on claim GETs";
      break;
  }
  Trace("  API server: " + what + " for " + std::to_string(duration.count()) + " ms");
  const auto until = std::chrono::steady_clock::now() + duration;
  if (variant == 4) {
    world_->api().SetForbidden("get", "resourceclaims", true);
  } else {
    world_->api().AddFault(fault);
  }
  if (const std::string uid = NewClaim(); !uid.empty()) PrepareHeld(uid, "");
  std::this_thread::sleep_until(until);
  world_->api().SetForbidden("get", "resourceclaims", false);
  world_->api().ClearFaults();
}

void DraCrashRun::Wipe() {
  Trace("  kubelet wipes the slice (" + std::to_string(world_->api().WipeSlices(kNode)) +
        " deleted)");
}

// serve again after a kill; kubelet registers it anew and repeats Prepare for every claim it
// holds (a prepared one must answer at once with the same devices) and Unprepare for the ones
// it was unpreparing.
void DraCrashRun::Restart() {
  ASSERT_TRUE(process::WaitUntil([&] { return world_->PluginExited().has_value(); }, 10s, 5ms));
  ASSERT_TRUE(world_->StartPlugin().ok());
  world_->dra_kubelet().Forget();
  const Status ready = world_->WaitDraRegisteredAndPublished();
  ASSERT_TRUE(ready.ok()) << "serve did not come back: " << ready.message() << SeeLog();
  Trace("  restart");
  std::vector<std::string> uids;
  for (const auto& [uid, held] : held_) uids.push_back(uid);
  for (const auto& uid : uids) {
    const bool was_answered = held_.at(uid).answered;
    const bool ok = PrepareHeld(uid, "repeated");
    EXPECT_TRUE(ok || !was_answered)
        << "the repeated Prepare of a prepared claim failed after a restart" << SeeLog();
  }
  std::vector<std::string> unpreparing;
  for (const auto& [uid, held] : unpreparing_) unpreparing.push_back(uid);
  for (const auto& uid : unpreparing) UnprepareClaim(uid, "repeated");
}

}  // namespace gfp::crashtest
