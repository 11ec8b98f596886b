#include "simulation/plugin/sim_world.h"

#include <cstdlib>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/host/module_mapping.h"
#include "adapters/host/pci_ids.h"
#include "engine/engine.h"
#include "plugin/core/fabric_link.h"
#include "plugin/core/node_inventory.h"

namespace gfp::simtest {

const char* FmTableFor(sim::NodePreset preset) {
  switch (preset) {
    case sim::NodePreset::kHgxH100: return "h100";
    case sim::NodePreset::kHgxB200: return "b200";
    case sim::NodePreset::kHgxA100x16: return "a100";
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
  config_.fm_call_deadline = std::chrono::milliseconds(2000);
  config_.node_name = "sim-node";
}

SimWorld::~SimWorld() { CrashPlugin(); }

Status SimWorld::StartPlugin() {
  if (core_) return FailedPrecondition("the plugin is already running");
  // The simulated FM library finds its state through the environment, read on every call.
  if (::setenv("NVFM_SIM_STATE", fm_.state_path().c_str(), 1) != 0) {
    return Internal("setenv NVFM_SIM_STATE failed");
  }
  // As plugin::Service::Create: journal, node scan, module mapping, FM client, core, Start.
  GFP_ASSIGN_OR_RETURN(auto engine, engine::Engine::Open(config_.journal));
  GFP_ASSIGN_OR_RETURN(adapters::PciIds names, adapters::LoadPciIds(config_.pci_ids));
  GFP_ASSIGN_OR_RETURN(plugin::NodeInventory inventory, plugin::ScanNode(config_.sysfs_root, names));
  if (inventory.resources.size() != 1) {
    return Internal("expected one GPU resource on the fake node, found " +
                    std::to_string(inventory.resources.size()));
  }
  resource_ = inventory.resources.front().naming.resource_name;
  const auto bdfs = inventory.Bdfs();
  GFP_ASSIGN_OR_RETURN(auto checked,
                       adapters::LoadModuleMappingFor(config_.pci_module_mapping, bdfs));
  fm::FabricManagerConfig fm_config;
  fm_config.library_path = config_.fm_library;
  fm_config.address = config_.fm_address;
  fm_config.call_deadline = config_.fm_call_deadline;
  // The client's reconnect backoff is real sleeping; keep it tiny so FM faults cost no time.
  fm_config.reconnect_backoff_initial = std::chrono::milliseconds(1);
  fm_config.reconnect_backoff_max = std::chrono::milliseconds(2);
  GFP_ASSIGN_OR_RETURN(auto client, fm::FabricManagerClient::Create(fm_config));
  auto fabric = std::make_unique<plugin::FabricLink>(std::move(client));
  core_ = std::make_unique<plugin::PluginCore>(config_, std::move(engine), std::move(inventory),
                                               std::move(checked.mapping), std::move(fabric),
                                               [this] { return now_; });
  Status started = core_->Start("simulation");
  if (!started.ok()) {
    core_.reset();
    return started.WithContext("PluginCore::Start");
  }
  ++starts_;
  // As plugin::Service::Run before serving: sync FM (may fail: FM down), then health.
  core_->SyncFabricManager();
  core_->CheckHealth();
  return Status::Ok();
}

void SimWorld::CrashPlugin() { core_.reset(); }

}  // namespace gfp::simtest
