// A simulated world with `serve` as a real process: a fake node tree (world_parts.h), the simulated
// Fabric Manager (libnvfm-sim.so, loaded by serve through its own dlopen path; its state in a
// file this side drives with FmSimControl), a fake kubelet with PodResources over real gRPC, and
// `serve` started as a child process with the command line serve_setup.h makes. The demo and the
// crash tests run here.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "process/child_process.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"
#include "sim/world/dra_parts.h"
#include "sim/world/serve_setup.h"
#include "sim/world/world_parts.h"
#include "statemachine/state.h"

namespace gfp::simworld {

struct ProcessWorldOptions {
  std::filesystem::path dir;            // everything lives here
  NodeKind node;                        // an HGX H100 unless told
  std::filesystem::path fm_library;     // libnvfm-sim.so
  std::filesystem::path plugin_binary;  // gpu-fabric-plugin
  std::chrono::milliseconds reconcile_interval{200};
  std::chrono::milliseconds release_grace{1000};
  std::string node_name = "demo-hgx-h100";
  // serve --mode=dra against a fake API server and the fake kubelet's DRA side (dra_parts.h).
  bool dra = false;
  // The simulated FM's state file elsewhere than in `dir` (e.g. on tmpfs, the benchmarks).
  std::filesystem::path fm_state_file;
};

class ProcessWorld {
 public:
  static Result<std::unique_ptr<ProcessWorld>> Create(ProcessWorldOptions options);
  ~ProcessWorld();

  Status StartPlugin();
  Status CrashPlugin();  // SIGKILL
  // The exit code (128 + signal when killed) once serve has ended, nullopt while it runs.
  std::optional<int> PluginExited();
  Result<int> StopPlugin();  // SIGTERM, the exit code
  // The running (or last) serve process, for its pid and command line.
  const process::ChildProcess* serve() const { return serve_.get(); }

  // Polls `check` until it succeeds or `timeout` passes; the last failure otherwise.
  static Status Eventually(const std::function<Status()>& check,
                           std::chrono::milliseconds timeout = std::chrono::seconds(15));

  Status WaitRegisteredAndHealthy(int min_registrations);
  // The partition journaled as active for exactly `devices`, if FM agrees.
  Result<sm::PartitionId> PartitionHolding(const std::vector<std::string>& devices) const;
  // FM's active set equals the journal's.
  Status FabricMatchesJournal() const;
  Result<sm::State> JournalState() const;
  Result<std::set<std::uint32_t>> FabricActive() const;

  kubelet::FakeKubelet& kubelet() { return *kubelet_; }
  // DRA mode only.
  apisim::FakeApiServer& api() { return *dra_->api; }
  kubelet::FakeDraKubelet& dra_kubelet() { return *dra_->kubelet; }
  const DraParts& dra_parts() const { return *dra_; }
  const ServeSetup& setup() const { return setup_; }
  // DRA mode: the fake kubelet has found and registered the plugin (kubelet's plugin watcher)
  // and our slice is in the API server.
  Status WaitDraRegisteredAndPublished();
  fmsim::FmSimControl& fabric() { return *fabric_; }
  const sim::FakeNode& node() const { return node_; }
  // The resource serve registered, known once WaitRegisteredAndHealthy succeeded.
  const std::string& resource() const { return resource_; }
  std::filesystem::path journal_path() const { return setup_.journal(); }
  std::filesystem::path log_path() const { return options_.dir / "serve.log"; }

 private:
  ProcessWorld(ProcessWorldOptions options, ServeSetup setup, WorldParts parts,
               std::optional<DraParts> dra);
  Status CheckRegisteredAndHealthy(int min_registrations);

  ProcessWorldOptions options_;
  ServeSetup setup_;
  sim::FakeNode node_;
  std::unique_ptr<fmsim::FmSimControl> fabric_;
  std::unique_ptr<kubelet::FakeKubelet> kubelet_;
  std::unique_ptr<process::ChildProcess> serve_;
  std::string resource_;
  std::optional<DraParts> dra_;
};

}  // namespace gfp::simworld
