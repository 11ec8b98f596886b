// The world of the deterministic simulation: a fake node tree, the in-memory Fabric Manager
// (in_memory_fm.h) behind the core's FabricPort, a journal in the world's folder, and a manual
// clock, with the real PluginCore built by plugin::BuildCore from the command line a real `serve`
// would get (serve_setup.h, parsed by serve's own parser). One thread, no gRPC, no dlopen, no
// deadline, no sleep: the caller drives the core's methods and the clock, so the same calls give
// the same journal, byte for byte.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/core/plugin_core.h"
#include "plugin/serve_config.h"
#include "sim/node/fake_node.h"
#include "sim/world/in_memory_fm.h"
#include "sim/world/serve_setup.h"
#include "sim/world/world_parts.h"

namespace gfp::simworld {

struct DeterministicOptions {
  std::filesystem::path dir;  // must exist and be empty
  NodeKind node;
  std::chrono::milliseconds reconcile_interval{5000};
  std::chrono::milliseconds release_grace{30000};
  // The engine checks the invariants after every command, as Debug builds do (the fuzz target).
  bool check_invariants_after_execute = false;
  // The core as serve --mode=dra builds it (SPEC §11: a restart keeps the node's mode).
  bool dra = false;
};

class DeterministicWorld {
 public:
  static Result<std::unique_ptr<DeterministicWorld>> Create(const DeterministicOptions& options);
  ~DeterministicWorld();
  DeterministicWorld(const DeterministicWorld&) = delete;
  DeterministicWorld& operator=(const DeterministicWorld&) = delete;

  // Builds a started PluginCore from the journal on disk (a fresh `serve` process), then
  // SyncFabricManager and CheckHealth, as Service::Run does. The plugin must be down. The
  // process may die in FM's resync (a CrashCaller fault): run it under DiedDuring then.
  Status StartPlugin();
  // The process dies: the core (engine, FM port) goes without any shutdown step.
  void CrashPlugin();
  // Runs `work` as the plugin process would; true when the process died inside it at an armed
  // CrashCaller point (the plugin is then down: StartPlugin brings it back).
  bool DiedDuring(const std::function<void()>& work);
  bool plugin_up() const { return core_ != nullptr; }
  plugin::core::PluginCore& core() { return *core_; }

  sm::Micros now() const { return now_; }
  void Advance(sm::Micros micros) { now_ += micros; }

  const sim::FakeNode& node() const { return node_; }
  InMemoryFm& fabric() { return *fm_; }
  fmsim::FmSimControl& fm() { return fm_->control(); }
  const plugin::ServeConfig& config() const { return config_; }
  // The node's only resource ("nvidia.com/GH100_H100_SXM5_80GB", ...), known after StartPlugin.
  const std::string& resource() const { return resource_; }
  std::uint64_t plugin_starts() const { return starts_; }

  // --- the judge's view: FM's own table and the node as built, never the plugin's state ------
  // The GPU (module) ids under kubelet device ids (GPU or VF BDFs); nullopt for an unknown id.
  std::optional<std::set<std::uint32_t>> ModulesOf(const std::vector<std::string>& devices) const;
  // The partition of FM's table whose GPUs are exactly `devices`' GPUs.
  std::optional<std::uint32_t> FmPartitionOf(const std::vector<std::string>& devices) const;
  // The module ids of a partition of FM's table (empty when FM has no such partition).
  std::set<std::uint32_t> FmPartitionModules(std::uint32_t partition_id) const;

 private:
  DeterministicWorld(DeterministicOptions options, sim::FakeNode node,
                     std::unique_ptr<InMemoryFm> fm, plugin::ServeConfig config);

  DeterministicOptions options_;
  sim::FakeNode node_;
  std::unique_ptr<InMemoryFm> fm_;
  plugin::ServeConfig config_;
  sm::Micros now_ = 1'700'000'000'000'000;  // 2023-11-14, in microseconds
  std::unique_ptr<plugin::core::PluginCore> core_;
  std::string resource_;
  std::uint64_t starts_ = 0;
};

}  // namespace gfp::simworld
