// `serve`: start-up in the order of SPEC §4.7, then the node daemon's loop — registration with
// retries, kubelet-restart detection, health watching, reconciliation — until asked to stop.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "adapters/kubelet/pod_resources_client.h"
#include "common/status.h"
#include "plugin/core/plugin_core.h"
#include "plugin/labels/node_labels_file.h"
#include "plugin/loop_chores.h"
#include "plugin/rpc/resource_server.h"
#include "plugin/serve_config.h"
#include "plugin/serve_metrics.h"

namespace gfp::plugin {

class Service {
 public:
  // Opens and recovers the journal, scans the node, loads pci.ids and the module mapping, loads
  // the FM library, and journals the start. Errors here are start-up errors (exit non-zero).
  static Result<std::unique_ptr<Service>> Create(ServeConfig config, const std::string& version,
                                                 core::Clock clock = core::SystemClock);
  ~Service();

  // Connects FM, serves and registers every resource, then loops until `stop` is true. Leaves
  // active partitions as they are when it returns.
  Status Run(const std::atomic<bool>& stop);

  core::PluginCore& core() { return *core_; }

 private:
  Service(ServeConfig config, std::unique_ptr<ServeMetrics> metrics,
          std::unique_ptr<core::PluginCore> core);
  void RestartServers(const std::string& reason);
  void RegisterPending();
  void ReconcileOnce();
  // SPEC §8.2: rewrites --node-labels-file when a free-partition count changed (a state read).
  void UpdateNodeLabels();

  ServeConfig config_;
  std::unique_ptr<ServeMetrics> metrics_;  // null without --metrics-address; outlives core_
  std::unique_ptr<core::PluginCore> core_;
  std::vector<std::unique_ptr<rpc::ResourceServer>> servers_;
  adapters::kubelet::PodResourcesClient pod_resources_;
  std::optional<rpc::FileIdentity> kubelet_socket_;
  std::chrono::steady_clock::time_point next_register_;
  std::chrono::milliseconds register_backoff_{250};
  IdleCheckpointer checkpointer_;
  std::optional<labels::NodeLabelsFile> node_labels_;  // with --node-labels-file
};

}  // namespace gfp::plugin
