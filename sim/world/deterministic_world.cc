#include "sim/world/deterministic_world.h"

#include <algorithm>

#include "plugin/build_core.h"
#include "sim/fm/sim_tables.h"
#include "sim/world/in_memory_port.h"

namespace gfp::simworld {

Result<std::unique_ptr<DeterministicWorld>> DeterministicWorld::Create(
    const DeterministicOptions& options) {
  GFP_ASSIGN_OR_RETURN(sim::FakeNode node, BuildNode(options.dir, options.node));
  GFP_ASSIGN_OR_RETURN(auto fm, InMemoryFm::Create(FmTableFor(options.node)));
  GFP_RETURN_IF_ERROR(ConfigureFabric(fm->control(), node));
  ServeSetup setup;
  setup.dir = options.dir;
  setup.reconcile_interval = options.reconcile_interval;
  setup.release_grace = options.release_grace;
  setup.dra = options.dra;
  std::error_code ec;
  std::filesystem::create_directories(setup.journal().parent_path(), ec);
  if (ec) return Internal("cannot create " + setup.journal().parent_path().string());
  GFP_ASSIGN_OR_RETURN(plugin::ServeConfig config,
                       ServeConfigFor(setup, node, {{"--node-name", "sim-node"}}));
  return std::unique_ptr<DeterministicWorld>(
      new DeterministicWorld(options, std::move(node), std::move(fm), std::move(config)));
}

DeterministicWorld::DeterministicWorld(DeterministicOptions options, sim::FakeNode node,
                                       std::unique_ptr<InMemoryFm> fm, plugin::ServeConfig config)
    : options_(std::move(options)),
      node_(std::move(node)),
      fm_(std::move(fm)),
      config_(std::move(config)) {}

DeterministicWorld::~DeterministicWorld() { CrashPlugin(); }

Status DeterministicWorld::StartPlugin() {
  if (core_) return FailedPrecondition("the plugin is already running");
  plugin::CoreOverrides overrides;
  if (options_.check_invariants_after_execute) {
    overrides.engine.check_invariants_after_execute = true;
  }
  const int process = static_cast<int>(starts_ + 1);
  overrides.fabric =
      [this, process](
          const plugin::ServeConfig& config) -> Result<std::unique_ptr<plugin::core::FabricPort>> {
    return std::unique_ptr<plugin::core::FabricPort>(std::make_unique<InMemoryFabricPort>(
        *fm_, config.fm_address, config.fm_call_deadline, process));
  };
  auto built = plugin::BuildCore(
      config_, "simulation", [this] { return now_; }, overrides);
  if (!built.ok()) return built.status().WithContext("plugin::BuildCore");
  core_ = std::move(built).value();
  const auto& resources = core_->inventory().resources;
  if (resources.size() != 1) {
    const auto found = resources.size();
    core_.reset();
    return Internal("expected one resource on the fake node, found " + std::to_string(found));
  }
  resource_ = resources.front().naming.resource_name;
  ++starts_;
  // As plugin::Service::Run before serving: sync FM (may fail: FM down), then health.
  core_->SyncFabricManager();
  core_->CheckHealth();
  return Status::Ok();
}

void DeterministicWorld::CrashPlugin() { core_.reset(); }

bool DeterministicWorld::DiedDuring(const std::function<void()>& work) {
  try {
    work();
    return false;
  } catch (const ProcessDied&) {
    CrashPlugin();
    return true;
  }
}

std::optional<std::set<std::uint32_t>> DeterministicWorld::ModulesOf(
    const std::vector<std::string>& devices) const {
  std::set<std::uint32_t> modules;
  for (const auto& id : devices) {
    std::string gpu_bdf = id;
    auto vf = std::find_if(node_.vfs.begin(), node_.vfs.end(),
                           [&](const sim::FakeVf& v) { return v.bdf == id; });
    if (vf != node_.vfs.end()) gpu_bdf = vf->parent_bdf;
    const sim::FakeGpu* gpu = node_.FindGpu(gpu_bdf);
    if (gpu == nullptr) return std::nullopt;
    modules.insert(gpu->module_id);
  }
  return modules;
}

std::optional<std::uint32_t> DeterministicWorld::FmPartitionOf(
    const std::vector<std::string>& devices) const {
  const auto modules = ModulesOf(devices);
  if (!modules || modules->size() != devices.size()) return std::nullopt;  // two on one GPU
  auto table = fmsim::FindTable(fm_->state().table);
  if (!table.ok()) return std::nullopt;
  for (const auto& partition : (*table)->partitions) {
    const std::set<std::uint32_t> ids(partition.physical_ids.begin(), partition.physical_ids.end());
    if (ids == *modules) return partition.id;
  }
  return std::nullopt;
}

std::set<std::uint32_t> DeterministicWorld::FmPartitionModules(std::uint32_t partition_id) const {
  auto table = fmsim::FindTable(fm_->state().table);
  if (!table.ok()) return {};
  const fmsim::SimPartition* partition = (*table)->Find(partition_id);
  if (partition == nullptr) return {};
  return {partition->physical_ids.begin(), partition->physical_ids.end()};
}

}  // namespace gfp::simworld
