// `serve --mode=dra` (SPEC §11): start-up, then the DRA node daemon's loop until asked to stop.
//   Create: metrics listener, API server config (a kubeconfig or the pod's service account; an
//           unreadable one fails the start before anything is created), the core (journal,
//           node scan, FM; one mode per node), and DRA mode's jobs over one HttpKubeApi.
//   Run:    FM sync and health; serve dra.sock and the registration socket (kubelet registers
//           us); publish the node's ResourceSlice and keep it so (a watch of our slices, the
//           core's changes); reconcile prepared claims and FM every --reconcile-interval.
// kubelet's calls arrive on gRPC threads through DraCalls (dra_calls.h).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "adapters/apiserver/api_client.h"
#include "adapters/apiserver/list_watch.h"
#include "common/status.h"
#include "plugin/core/plugin_core.h"
#include "plugin/dra_calls.h"
#include "plugin/dra_mode/claim_preparer.h"
#include "plugin/dra_mode/claim_reconciler.h"
#include "plugin/dra_mode/http_kube_api.h"
#include "plugin/dra_mode/slice_publisher.h"
#include "plugin/loop_chores.h"
#include "plugin/rpc/dra_server.h"
#include "plugin/serve_config.h"
#include "plugin/serve_metrics.h"

namespace gfp::plugin {

class DraService {
 public:
  static Result<std::unique_ptr<DraService>> Create(ServeConfig config, const std::string& version,
                                                    core::Clock clock = core::SystemClock);
  ~DraService();

  Status Run(const std::atomic<bool>& stop);

  core::PluginCore& core() { return *core_; }

 private:
  DraService(ServeConfig config, std::unique_ptr<ServeMetrics> metrics,
             std::unique_ptr<adapters::apiserver::ApiClient> client,
             std::unique_ptr<core::PluginCore> core);
  void ServeSockets();
  // Publishes when the facts or our slices changed, or a failed pass is due again.
  void PublishIfDue();
  void ReconcileOnce();
  // Once FM's table is known: the partitions DRA cannot offer (SPEC §11), listed once.
  void WarnAboutPartitionsNotOffered();
  void StartSliceWatch();

  ServeConfig config_;
  std::unique_ptr<ServeMetrics> metrics_;  // null without --metrics-address; outlives core_
  std::unique_ptr<adapters::apiserver::ApiClient> client_;
  std::unique_ptr<core::PluginCore> core_;
  dra_mode::HttpKubeApi api_;
  dra_mode::ClaimPreparer preparer_;
  dra_mode::SlicePublisher publisher_;
  dra_mode::ClaimReconciler claims_;
  DraCalls calls_;
  rpc::DraServer server_;
  std::unique_ptr<adapters::apiserver::ListWatcher> slice_watch_;
  IdleCheckpointer checkpointer_;
  std::unique_ptr<adapters::apiserver::ApiCallObserver> api_metrics_;  // with metrics_

  // Our slices as the watch last saw them (its thread writes, the loop reads).
  std::mutex watched_mu_;
  std::optional<std::vector<nlohmann::json>> watched_;
  bool watched_changed_ = false;
  // The loop's publishing state.
  std::uint64_t published_version_ = 0;  // the core's change counter at the last good pass
  bool published_once_ = false;
  bool left_out_logged_ = false;
  bool relist_ = true;  // list before the next pass (start, a conflict)
  std::chrono::steady_clock::time_point next_publish_try_{};
  std::chrono::milliseconds publish_backoff_{250};
};

}  // namespace gfp::plugin
