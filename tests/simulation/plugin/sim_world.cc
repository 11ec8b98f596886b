#include "simulation/plugin/sim_world.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "plugin/build_core.h"

namespace gfp::simtest {

const char* FmTableFor(sim::NodePreset preset) {
  switch (preset) {
    case sim::NodePreset::kHgxH100:
      return "h100";
    case sim::NodePreset::kHgxB200:
      return "b200";
    case sim::NodePreset::kHgxA100x16:
      return "a100";
  }
  return "h100";
}

Result<std::unique_ptr<SimWorld>> SimWorld::Create(const WorldOptions& options) {
  sim::FakeNodeSpec spec;
  spec.preset = options.preset;
  GFP_ASSIGN_OR_RETURN(sim::FakeNode node, sim::BuildFakeNode(options.dir / "node", spec));
  const auto state = options.dir / "fabric-manager.state";
  GFP_ASSIGN_OR_RETURN(fmsim::FmSimControl fm,
                       fmsim::FmSimControl::Create(state.string(), FmTableFor(options.preset)));
  return std::unique_ptr<SimWorld>(new SimWorld(options, std::move(node), std::move(fm)));
}

SimWorld::SimWorld(WorldOptions options, sim::FakeNode node, fmsim::FmSimControl fm)
    : options_(std::move(options)), node_(std::move(node)), fm_(std::move(fm)) {
  config_.fabric_manager = true;
  config_.fm_address = "/run/nvidia-fabricmanager/fmpm.sock";
  config_.fm_library = GFP_FM_SIM_LIBRARY;
  config_.pci_module_mapping = node_.module_mapping_file;
  config_.sysfs_root = node_.sysfs_root;
  config_.dev_root = node_.dev_root;
  config_.journal = options_.dir / "journal" / "journal.db";
  config_.pci_ids = node_.pci_ids_file;
  config_.reconcile_interval = options_.reconcile_interval;
  config_.release_grace = options_.release_grace;
  config_.fm_call_deadline = options_.fm_call_deadline;
  config_.node_name = "sim-node";
}

SimWorld::~SimWorld() { CrashPlugin(); }

Status SimWorld::StartPlugin() {
  if (core_) return FailedPrecondition("the plugin is already running");
  // The simulated FM library finds its state through the environment, read on every call.
  if (::setenv("NVFM_SIM_STATE", fm_.state_path().c_str(), 1) != 0) {
    return Internal("setenv NVFM_SIM_STATE failed");
  }
  // Built as plugin::Service::Create builds it; only the reconnect backoff is shorter (it is
  // real sleeping) so that FM faults cost no time.
  plugin::CoreOverrides overrides;
  overrides.fm_reconnect_backoff_initial = std::chrono::milliseconds(1);
  overrides.fm_reconnect_backoff_max = std::chrono::milliseconds(2);
  auto built = plugin::BuildCore(
      config_, "simulation", [this] { return now_; }, overrides);
  if (!built.ok()) return built.status().WithContext("plugin::BuildCore");
  core_ = std::move(built).value();
  const auto& resources = core_->inventory().resources;
  if (resources.size() != 1) {
    const auto found = resources.size();
    core_.reset();
    return Internal("expected one GPU resource on the fake node, found " + std::to_string(found));
  }
  resource_ = resources.front().naming.resource_name;
  ++starts_;
  // As plugin::Service::Run before serving: sync FM (may fail: FM down), then health.
  core_->SyncFabricManager();
  core_->CheckHealth();
  return Status::Ok();
}

void SimWorld::CrashPlugin() { core_.reset(); }

Result<int> SimWorld::RunInChild(const std::function<int(SimWorld&)>& body) {
  if (core_) return FailedPrecondition("stop the plugin before forking: SQLite must not cross it");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) return Internal(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) ::_exit(body(*this));  // no destructors, no atexit: the process just ends
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Internal(std::string("waitpid failed: ") + std::strerror(errno));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace gfp::simtest
