// The world one simulated scenario runs in: a fake node tree, the simulated Fabric Manager (its
// state file and control API), a journal in a temp dir, a fake clock, and the real PluginCore built
// by plugin::BuildCore, the composition root Service::Create uses (engine, node scan, module
// mapping, FM client through dlopen of the simulated library). No gRPC, no threads of our own, no
// sleeping: the test calls PluginCore's methods itself and advances the clock by hand.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "plugin/core/plugin_core.h"
#include "plugin/serve_config.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/node/fake_node.h"

namespace gfp::simtest {

struct WorldOptions {
  std::filesystem::path dir;  // must exist and be empty
  sim::NodePreset preset = sim::NodePreset::kHgxH100;
  std::chrono::milliseconds reconcile_interval{5000};
  std::chrono::milliseconds release_grace{30000};
  // The FM client's per-call deadline (ServeConfig::fm_call_deadline).
  std::chrono::milliseconds fm_call_deadline{2000};
};

// The FM table name the simulator uses for a node preset ("h100", "a100", "b200").
const char* FmTableFor(sim::NodePreset preset);

class SimWorld {
 public:
  static Result<std::unique_ptr<SimWorld>> Create(const WorldOptions& options);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  // Builds a started PluginCore from the journal on disk with plugin::BuildCore (like a fresh
  // `serve` process), then SyncFabricManager and CheckHealth, as Service::Run does. The plugin must
  // be down.
  Status StartPlugin();
  // The process dies: PluginCore (and with it the engine and the FM client) is destroyed without
  // any clean shutdown step (no snapshot, no stopping of servers).
  void CrashPlugin();
  bool plugin_up() const { return core_ != nullptr; }
  // Runs `body` in a fork()ed child process and returns its exit status (128 + signal number
  // when a signal ended it). The plugin must be down, so that no SQLite connection crosses the
  // fork; the child typically StartPlugin()s from the journal and dies inside an FM call (a sim
  // CrashCaller fault), like a process losing its memory without running destructors. The child
  // never returns: it _exit()s with body's result. Nothing the child changes in memory (the
  // clock, the plugin) reaches the parent; the journal and FM's state file do.
  Result<int> RunInChild(const std::function<int(SimWorld&)>& body);
  plugin::PluginCore& core() { return *core_; }

  sm::Micros now() const { return now_; }
  void Advance(sm::Micros micros) { now_ += micros; }

  const sim::FakeNode& node() const { return node_; }
  fmsim::FmSimControl& fm() { return fm_; }
  const plugin::ServeConfig& config() const { return config_; }
  // The node's only GPU resource ("nvidia.com/GH100_H100_SXM5_80GB", ...), known after the first
  // StartPlugin.
  const std::string& resource() const { return resource_; }
  std::uint64_t plugin_starts() const { return starts_; }

 private:
  SimWorld(WorldOptions options, sim::FakeNode node, fmsim::FmSimControl fm);

  WorldOptions options_;
  sim::FakeNode node_;
  fmsim::FmSimControl fm_;
  plugin::ServeConfig config_;
  sm::Micros now_ = 1'700'000'000'000'000;  // 2023-11-14, in microseconds
  std::unique_ptr<plugin::PluginCore> core_;
  std::string resource_;
  std::uint64_t starts_ = 0;
};

}  // namespace gfp::simtest
