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
  return setup;
}

}  // namespace

Result<std::unique_ptr<ProcessWorld>> ProcessWorld::Create(ProcessWorldOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) return Internal("cannot create " + options.dir.string() + ": " + ec.message());
  GFP_ASSIGN_OR_RETURN(sim::FakeNode node,
                       sim::BuildFakeNode(options.dir / "node", sim::FakeNodeSpec{}));
  GFP_ASSIGN_OR_RETURN(fmsim::FmSimControl fabric,
                       fmsim::FmSimControl::Create(SetupFor(options).fm_state().string(), "h100"));
  std::unique_ptr<ProcessWorld> world(
      new ProcessWorld(std::move(options), std::move(node), fabric));
  kubelet::FakeKubeletOptions k;
  k.device_plugin_dir = world->setup_.device_plugin_dir();
  k.pod_resources_socket = world->setup_.pod_resources_socket();
  std::filesystem::create_directories(k.device_plugin_dir, ec);
  std::filesystem::create_directories(k.pod_resources_socket.parent_path(), ec);
  world->kubelet_ = std::make_unique<kubelet::FakeKubelet>(k);
  GFP_RETURN_IF_ERROR(world->kubelet_->Start());
  return world;
}

ProcessWorld::ProcessWorld(ProcessWorldOptions options, sim::FakeNode node,
                           fmsim::FmSimControl fabric)
    : options_(std::move(options)),
      setup_(SetupFor(options_)),
      node_(std::move(node)),
      fabric_(std::make_unique<fmsim::FmSimControl>(std::move(fabric))) {}

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

Status ProcessWorld::WaitRegisteredAndHealthy(int min_registrations) {
  return Eventually([&]() -> Status {
    if (auto code = PluginExited()) {
      return Internal("serve exited with code " + std::to_string(*code) + " (see " +
                      log_path().string() + ")");
    }
    auto r = kubelet_->Resource(resource_);
    if (!r || r->registrations < min_registrations || !r->connected) {
      return Unavailable(resource_ + " is not registered with kubelet yet");
    }
    int healthy = 0;
    for (const auto& d : r->devices) healthy += d.health() == "Healthy";
    if (healthy != static_cast<int>(node_.gpus.size())) {
      return Unavailable(std::to_string(healthy) + " of " + std::to_string(node_.gpus.size()) +
                         " devices Healthy");
    }
    return Status::Ok();
  });
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
