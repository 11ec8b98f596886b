// `serve --mode=dra` (SPEC §11): start-up, then the DRA node daemon's loop until asked to stop.
//   Create: metrics listener, API server config (a kubeconfig or the pod's service account; an
//           unreadable one fails the start before anything is created), the core (journal,
//           node scan, FM; one mode per node), and DRA mode's jobs over one HttpKubeApi.
//   Run:    the serve loop: FM sync and health; serve dra.sock and the registration socket
//           (kubelet registers us); keep FM in step and finish unprepares every
//           --reconcile-interval. The API thread, so that no API call ever holds up the loop
//           (an outage must not stop the node's local work nor fail /healthz): publish the
//           node's ResourceSlice and keep it so (a watch of our slices, the core's changes);
//           check prepared claims with the API server every --reconcile-interval.
// kubelet's calls arrive on gRPC threads through DraCalls (dra_calls.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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
  // The serve loop's pass every --reconcile-interval: FM kept in step, unprepares finished.
  void ReconcileOnce();
  // The API thread: started once the sockets are served, stopped before them.
  void StartApiJobs();
  void StopApiJobs();
  void RunApiJobs();
  // Publishes when the facts or our slices changed, or a failed pass is due again.
  void PublishIfDue();
  void CheckClaims();
  void SetApiProblem(std::string problem);
  std::string ApiProblem();
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
  class ApiReachability;
  std::unique_ptr<ApiReachability> reachability_;  // observes every call, then api_metrics_

  // Our slices as the watch last saw them (its thread writes, the loop reads).
  std::mutex watched_mu_;
  std::optional<std::vector<nlohmann::json>> watched_;
  bool watched_changed_ = false;
  // The API thread, and what it tells the serve loop.
  std::thread api_thread_;
  std::mutex api_mu_;
  std::condition_variable api_wake_;
  bool api_stop_ = false;    // under api_mu_
  std::string api_problem_;  // under api_mu_: why the API server was last not usable
  std::atomic<bool> published_once_{false};
  // The API thread's publishing state.
  std::uint64_t published_version_ = 0;  // the core's change counter at the last good pass
  std::string publish_problem_;          // why the last pass failed, empty when it did not
  bool claims_unreachable_ = false;      // the last check of the claims had no definite answer
  bool left_out_logged_ = false;
  bool relist_ = true;  // list before the next pass (start, a conflict)
  std::chrono::steady_clock::time_point next_publish_try_{};
  // Until then a change seen only by the watch (someone else's edit) is not written back:
  // the publisher's backoff from another writer (PublishResult::retry_after).
  std::chrono::steady_clock::time_point hold_watch_until_{};
  std::chrono::milliseconds publish_backoff_{250};
};

}  // namespace gfp::plugin
