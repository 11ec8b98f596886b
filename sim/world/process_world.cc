#include "sim/world/process_world.h"

#include <thread>

#include "common/strings.h"
#include "engine/engine.h"
#include "store/journal.h"

namespace gfp::simworld {
namespace {

ServeSetup SetupFor(const ProcessWorldOptions& options) {
  ServeSetup setup;
  setup.dir = options.dir;
  setup.fm_library = options.fm_library;
  setup.reconcile_interval = options.reconcile_interval;
  setup.release_grace = options.release_grace;
  setup.dra = options.dra;
  setup.fm_state_file = options.fm_state_file;
  return setup;
}

}  // namespace

Result<std::unique_ptr<ProcessWorld>> ProcessWorld::Create(ProcessWorldOptions options) {
  ServeSetup setup = SetupFor(options);
  GFP_ASSIGN_OR_RETURN(WorldParts parts,
                       AssembleWorld(setup, options.node, std::chrono::seconds(60)));
  std::optional<DraParts> dra;
  if (options.dra) {
    GFP_ASSIGN_OR_RETURN(DraParts made, AssembleDraParts(setup, options.node_name));
    dra = std::move(made);
  }
  return std::unique_ptr<ProcessWorld>(
      new ProcessWorld(std::move(options), std::move(setup), std::move(parts), std::move(dra)));
}

ProcessWorld::ProcessWorld(ProcessWorldOptions options, ServeSetup setup, WorldParts parts,
                           std::optional<DraParts> dra)
    : options_(std::move(options)),
      setup_(std::move(setup)),
      node_(std::move(parts.node)),
      fabric_(std::make_unique<fmsim::FmSimControl>(std::move(parts.fabric))),
      kubelet_(std::move(parts.kubelet)),
      dra_(std::move(dra)) {}

ProcessWorld::~ProcessWorld() {
  serve_.reset();  // SIGKILLs a serve still running
  if (kubelet_) kubelet_->Stop();
}

Status ProcessWorld::StartPlugin() {
  if (serve_ && serve_->Running()) {
    return FailedPrecondition("serve (pid " + std::to_string(serve_->pid()) + ") still runs");
  }
  process::ProcessOptions o;
  o.binary = options_.plugin_binary;
  o.args = ServeArgs(setup_, node_);
  o.env = ServeEnv(setup_, options_.node_name);
  o.log_path = log_path();
  GFP_ASSIGN_OR_RETURN(serve_, process::ChildProcess::Start(std::move(o)));
  return Status::Ok();
}

Status ProcessWorld::CrashPlugin() {
  if (!serve_ || !serve_->Running()) return FailedPrecondition("serve is not running");
  serve_->Kill();
  return Status::Ok();
}

std::optional<int> ProcessWorld::PluginExited() {
  if (!serve_ || serve_->Running()) return std::nullopt;
  return serve_->exit_status()->ShellCode();
}

Result<int> ProcessWorld::StopPlugin() {
  if (!serve_ || !serve_->Running()) return FailedPrecondition("serve is not running");
  const process::ExitStatus status = serve_->Terminate(std::chrono::seconds(15));
  if (status.killed_after_timeout) {
    return DeadlineExceeded("serve did not stop within 15000 ms of SIGTERM; killed");
  }
  return status.ShellCode();
}

Status ProcessWorld::Eventually(const std::function<Status()>& check,
                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Status last = check();
  while (!last.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    last = check();
  }
  return last.WithContext("still not true after " + std::to_string(timeout.count()) + " ms");
}

Status ProcessWorld::WaitDraRegisteredAndPublished() {
  if (!dra_) return FailedPrecondition("not a DRA-mode world");
  GFP_RETURN_IF_ERROR(Eventually([&]() -> Status {
    if (auto code = PluginExited()) {
      return Internal("serve exited with code " + std::to_string(*code) + " (see " +
                      log_path().string() + ")");
    }
    return dra_->kubelet->Discover(setup_.dra_driver, std::chrono::seconds(2));
  }));
  return Eventually([&]() -> Status {
    if (dra_->api->Slices().empty()) return Unavailable("no ResourceSlice in the API server yet");
    return Status::Ok();
  });
}

Status ProcessWorld::WaitRegisteredAndHealthy(int min_registrations) {
  return Eventually([&] { return CheckRegisteredAndHealthy(min_registrations); });
}

Status ProcessWorld::CheckRegisteredAndHealthy(int min_registrations) {
  if (auto code = PluginExited()) {
    return Internal("serve exited with code " + std::to_string(*code) + " (see " +
                    log_path().string() + ")");
  }
  if (resource_.empty()) {
    for (const auto& attempt : kubelet_->RegistrationLog()) {
      if (attempt.status.ok()) {
        resource_ = attempt.request.resource_name();
        break;
      }
    }
    if (resource_.empty()) return Unavailable("serve has not registered with kubelet yet");
  }
  auto r = kubelet_->Resource(resource_);
  if (!r || r->registrations < min_registrations || !r->connected) {
    return Unavailable(resource_ + " is not registered with kubelet yet");
  }
  int healthy = 0;
  for (const auto& d : r->devices) healthy += d.health() == "Healthy";
  // Whole GPUs: one device each. A vGPU node's count depends on its types: all Healthy.
  const std::size_t expected = node_.vgpu_preset ? r->devices.size() : node_.gpus.size();
  if (healthy == 0 || healthy != static_cast<int>(expected)) {
    return Unavailable(std::to_string(healthy) + " of " + std::to_string(expected) +
                       " devices Healthy");
  }
  return Status::Ok();
}

Result<sm::State> ProcessWorld::JournalState() const {
  GFP_ASSIGN_OR_RETURN(auto journal,
                       store::Journal::Open(journal_path(), store::OpenMode::kReadOnly));
  return engine::Replay(*journal, 0, true, true);
}

Result<std::set<std::uint32_t>> ProcessWorld::FabricActive() const {
  GFP_ASSIGN_OR_RETURN(auto active, fabric_->ActivePartitions());
  return std::set<std::uint32_t>(active.begin(), active.end());
}

Status ProcessWorld::FabricMatchesJournal() const {
  GFP_ASSIGN_OR_RETURN(sm::State state, JournalState());
  GFP_ASSIGN_OR_RETURN(auto fm, FabricActive());
  std::set<std::uint32_t> journal;
  for (const auto& [pid, active] : state.active) journal.insert(pid);
  if (journal != fm) {
    auto text = [](const std::set<std::uint32_t>& s) { return "[" + Join(s) + "]"; };
    return FailedPrecondition("Fabric Manager has " + text(fm) + " active, the journal " +
                              text(journal));
  }
  return Status::Ok();
}

Result<sm::PartitionId> ProcessWorld::PartitionHolding(
    const std::vector<std::string>& devices) const {
  GFP_ASSIGN_OR_RETURN(sm::State state, JournalState());
  auto pid = sm::PartitionWithExactDevices(state, devices);
  const std::string list = Join(devices);
  if (!pid) return FailedPrecondition("devices " + list + " are not one partition");
  if (!state.active.count(*pid)) {
    return FailedPrecondition("partition " + std::to_string(*pid) + " of " + list +
                              " is not active in the journal");
  }
  GFP_ASSIGN_OR_RETURN(auto fm, FabricActive());
  if (!fm.count(*pid)) {
    return FailedPrecondition("partition " + std::to_string(*pid) + " is not active in FM");
  }
  return *pid;
}

}  // namespace gfp::simworld
