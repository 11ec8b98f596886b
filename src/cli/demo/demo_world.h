// The demo's simulated world: a fake HGX H100 node tree, the simulated Fabric Manager, a fake
// kubelet with PodResources, and `serve` running as a child process against all of them.
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
#include "statemachine/state.h"

namespace gfp::cli {

struct DemoOptions {
  std::filesystem::path dir;            // everything lives here
  std::filesystem::path fm_library;     // libnvfm-sim.so
  std::filesystem::path plugin_binary;  // gpu-fabric-plugin; empty: this executable
  std::chrono::milliseconds reconcile_interval{200};
  std::chrono::milliseconds release_grace{1000};
};

class DemoWorld {
 public:
  static Result<std::unique_ptr<DemoWorld>> Create(DemoOptions options);
  ~DemoWorld();

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
  fmsim::FmSimControl& fabric() { return *fabric_; }
  const sim::FakeNode& node() const { return node_; }
  const std::string& resource() const { return resource_; }
  std::filesystem::path journal_path() const { return options_.dir / "journal.db"; }
  std::filesystem::path log_path() const { return options_.dir / "serve.log"; }

 private:
  DemoWorld(DemoOptions options, sim::FakeNode node, fmsim::FmSimControl fabric);
  std::vector<std::string> ServeArgs() const;

  DemoOptions options_;
  sim::FakeNode node_;
  std::unique_ptr<fmsim::FmSimControl> fabric_;
  std::unique_ptr<kubelet::FakeKubelet> kubelet_;
  std::unique_ptr<process::ChildProcess> serve_;
  std::string resource_ = "nvidia.com/GH100_H100_SXM5_80GB";
};

}  // namespace gfp::cli
