#include "plugin/dra_service.h"

#include <spdlog/spdlog.h>

#include "adapters/apiserver/in_cluster.h"
#include "adapters/apiserver/kubeconfig.h"
#include "adapters/kubelet/grpc_lifetime.h"
#include "plugin/build_core.h"
#include "plugin/core/log_text.h"
#include "plugin/dra/claim_file_staging.h"
#include "statemachine/offered_partitions.h"

namespace gfp::plugin {
namespace {

using Steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kLoopTick{100};
constexpr std::chrono::milliseconds kMaxPublishBackoff{5000};

Result<adapters::apiserver::ApiServerConfig> LoadApiConfig(const ServeConfig& config) {
  if (!config.kubeconfig.empty()) return adapters::apiserver::LoadKubeconfig(config.kubeconfig);
  return adapters::apiserver::InClusterConfig(adapters::apiserver::ProcessEnvironment());
}

dra_mode::DraSettings SettingsOf(const ServeConfig& config) {
  dra_mode::DraSettings s;
  s.driver = config.dra_driver_name;
  s.node = config.node_name;
  s.dirs = {config.cdi_dir, config.kubelet_plugins_dir / config.dra_driver_name};
  s.dev_root = config.dev_root;
  return s;
}

// Counts every API request for gpu_fabric_api_requests_total.
class ApiRequestMetrics : public adapters::apiserver::ApiCallObserver {
 public:
  explicit ApiRequestMetrics(ServeMetrics& metrics) : metrics_(metrics) {}
  void OnApiCall(adapters::apiserver::Verb verb, const std::string& resource, int code) override {
    metrics_.registry().RecordApiRequest(adapters::apiserver::VerbName(verb), resource, code);
  }

 private:
  ServeMetrics& metrics_;
};

}  // namespace

// Whether the API server answers at all, from every attempt of every call: an outage shows on
// /readyz at its first unanswered attempt, not after a whole call's retries.
class DraService::ApiReachability : public adapters::apiserver::ApiCallObserver {
 public:
  explicit ApiReachability(adapters::apiserver::ApiCallObserver* next) : next_(next) {}
  void OnApiCall(adapters::apiserver::Verb verb, const std::string& resource, int code) override {
    {
      std::lock_guard lock(mu_);
      if (code == 0) {
        problem_ = std::string("no answer to ") + adapters::apiserver::VerbName(verb) + " " +
                   resource + " within its timeout";
      } else {
        problem_.clear();
      }
    }
    if (next_) next_->OnApiCall(verb, resource, code);
  }
  std::string problem() {
    std::lock_guard lock(mu_);
    return problem_;
  }

 private:
  adapters::apiserver::ApiCallObserver* const next_;
  std::mutex mu_;
  std::string problem_;
};

Result<std::unique_ptr<DraService>> DraService::Create(ServeConfig config,
                                                       const std::string& version,
                                                       core::Clock clock) {
  adapters::kubelet::KeepGrpcInitialized();
  std::unique_ptr<ServeMetrics> metrics;  // listening first: a busy port changes nothing
  if (!config.metrics_address.empty()) {
    GFP_ASSIGN_OR_RETURN(
        metrics, ServeMetrics::Start(config.metrics_address, version, config.reconcile_interval));
  }
  // The API server's config before the journal: an unreadable kubeconfig creates nothing.
  GFP_ASSIGN_OR_RETURN(auto api_config, LoadApiConfig(config));
  spdlog::info("API server {} ({})", api_config.server, api_config.source);
  GFP_ASSIGN_OR_RETURN(auto client, adapters::apiserver::ApiClient::Create(std::move(api_config)));
  GFP_ASSIGN_OR_RETURN(auto core, BuildCore(config, version, std::move(clock)));
  // Only now: the journal's lock says no other plugin process is staging claims' files.
  if (Status cleared = dra::ClearClaimStaging(SettingsOf(config).dirs); !cleared.ok()) {
    spdlog::warn("{}", cleared.message());
  }
  if (metrics) metrics->Attach(*core);
  return std::unique_ptr<DraService>(
      new DraService(std::move(config), std::move(metrics), std::move(client), std::move(core)));
}

DraService::DraService(ServeConfig config, std::unique_ptr<ServeMetrics> metrics,
                       std::unique_ptr<adapters::apiserver::ApiClient> client,
                       std::unique_ptr<core::PluginCore> core)
    : config_(std::move(config)),
      metrics_(std::move(metrics)),
      client_(std::move(client)),
      core_(std::move(core)),
      api_(*client_),
      preparer_(*core_, api_, SettingsOf(config_)),
      publisher_(*core_, api_, SettingsOf(config_),
                 dra_mode::SliceHostFacts(core_->inventory(), config_.sysfs_root)),
      claims_(*core_, api_, preparer_, config_.release_grace),
      calls_(preparer_),
      server_(calls_, config_.dra_driver_name, config_.kubelet_registry_dir,
              config_.kubelet_plugins_dir) {
  if (metrics_) {
    calls_.SetMetrics(metrics_.get());
    api_metrics_ = std::make_unique<ApiRequestMetrics>(*metrics_);
  }
  reachability_ = std::make_unique<ApiReachability>(api_metrics_.get());
  client_->SetObserver(reachability_.get());
}

DraService::~DraService() {
  StopApiJobs();
  if (slice_watch_) slice_watch_->Stop();
  client_->Cancel();
  server_.Stop();
  client_->SetObserver(nullptr);
}

void DraService::ServeSockets() {
  if (server_.serving() && !server_.SocketLost()) return;
  if (server_.serving()) {
    spdlog::warn("a DRA socket was removed (kubelet wiped its plugin folders): serving again");
    core_->ObserveKubeletRestart("the DRA plugin's socket was removed");
    server_.Stop();
  }
  if (Status status = server_.Serve(); !status.ok()) server_.ReportServeFailure(status);
}

void DraService::StartSliceWatch() {
  adapters::apiserver::ListWatchOptions options;
  options.resource = "resourceslices";
  options.path = dra_mode::kSlicesPath;
  options.field_selector = dra_mode::SliceFieldSelector(config_.node_name, config_.dra_driver_name);
  slice_watch_ = std::make_unique<adapters::apiserver::ListWatcher>(
      *client_, options, [this](const adapters::apiserver::ObjectsByName& objects) {
        // Only ours are copied: a server that ignores the field selector sends every node's
        // (the publisher names such slices when it lists).
        std::vector<nlohmann::json> slices;
        for (const auto& [name, slice] : objects) {
          if (dra_mode::IsOurSlice(slice, publisher_.settings())) slices.push_back(slice);
        }
        {
          std::lock_guard lock(watched_mu_);
          watched_ = std::move(slices);
          watched_changed_ = true;
        }
        api_wake_.notify_all();
      });
  slice_watch_->Start();
}

void DraService::PublishIfDue() {
  const std::uint64_t version = core_->version();
  std::optional<std::vector<nlohmann::json>> observed;
  bool watch_changed = false;
  {
    std::lock_guard lock(watched_mu_);
    watch_changed = watched_changed_;
    watched_changed_ = false;
    if (!relist_) observed = watched_;
  }
  const auto now = Steady::now();
  // Another writer's edits (the watch) wait out the publisher's hold; our own changes do not.
  const bool ours_due = !published_once_ || relist_ || version != published_version_;
  const bool due = ours_due || (watch_changed && now >= hold_watch_until_);
  if (!due || now < next_publish_try_) {
    if (watch_changed) {
      std::lock_guard lock(watched_mu_);
      watched_changed_ = true;  // keep it for the retry
    }
    return;
  }
  auto result = publisher_.Publish(observed);
  if (!result.ok()) {
    const std::string problem = core::LogText(result.status().message(), 1024);
    if (problem != publish_problem_) {
      spdlog::warn("publishing the ResourceSlice: {} (retrying with backoff up to {} ms)", problem,
                   kMaxPublishBackoff.count());
    }
    publish_problem_ = problem;
    // A 409 is a race with another writer, answered by a relist: the API server is fine.
    if (result.status().code() != ErrorCode::kAlreadyExists) SetApiProblem(problem);
    relist_ = true;  // a conflict or an outage: read the API server's slices afresh
    next_publish_try_ = now + publish_backoff_;
    publish_backoff_ = std::min(publish_backoff_ * 2, kMaxPublishBackoff);
    return;
  }
  if (!publish_problem_.empty()) spdlog::info("the ResourceSlice is published again");
  publish_problem_.clear();
  SetApiProblem("");
  published_once_ = true;
  published_version_ = version;
  relist_ = result->relist;
  hold_watch_until_ = now + result->retry_after;
  publish_backoff_ = std::chrono::milliseconds(250);
}

void DraService::WarnAboutPartitionsNotOffered() {
  if (left_out_logged_) return;
  const auto offer = core_->engine().Read(
      [](const sm::State& s) { return sm::OfferPartitions(s.partitions.value()); });
  if (offer.offered.empty()) return;  // FM's table is not known yet
  left_out_logged_ = true;
  for (const auto& [size, ids] : offer.left_out) {
    std::string list;
    for (const auto id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
    spdlog::warn(
        "{}-GPU partitions {} are not offered through DRA: each shares GPUs with an "
        "offered one, and a slice attribute holds one partition per size "
        "(device-plugin mode still serves them; docs/dra.md)",
        size, list);
  }
}

void DraService::CheckClaims() {
  const auto result = claims_.Reconcile();
  const bool unreachable = result.unreachable > 0;
  if (unreachable && !claims_unreachable_) {
    spdlog::warn(
        "{} of {} prepared claims could not be checked with the API server; nothing is "
        "unprepared without a definite answer (said once until they can be checked again)",
        result.unreachable, result.checked);
  } else if (!unreachable && claims_unreachable_) {
    spdlog::info("the prepared claims can be checked with the API server again");
  }
  claims_unreachable_ = unreachable;
}

void DraService::SetApiProblem(std::string problem) {
  std::lock_guard lock(api_mu_);
  api_problem_ = std::move(problem);
}

std::string DraService::ApiProblem() {
  {
    std::lock_guard lock(api_mu_);
    if (!api_problem_.empty()) return api_problem_;
  }
  return reachability_->problem();
}

void DraService::RunApiJobs() {
  auto next_check = Steady::now();  // start-up check of prepared claims
  std::unique_lock lock(api_mu_);
  while (!api_stop_) {
    lock.unlock();
    PublishIfDue();
    WarnAboutPartitionsNotOffered();
    if (Steady::now() >= next_check) {
      next_check = Steady::now() + config_.reconcile_interval;
      CheckClaims();
    }
    lock.lock();
    // Woken early by the watch; the core's changes are seen within one tick.
    api_wake_.wait_for(lock, kLoopTick, [&] { return api_stop_; });
  }
}

void DraService::StartApiJobs() {
  api_thread_ = std::thread([this] { RunApiJobs(); });
}

void DraService::StopApiJobs() {
  if (!api_thread_.joinable()) return;
  {
    std::lock_guard lock(api_mu_);
    api_stop_ = true;
  }
  api_wake_.notify_all();
  client_->Cancel();  // ends its backoff waits; a call in flight ends at its timeout
  api_thread_.join();
}

void DraService::ReconcileOnce() {
  const auto started = Steady::now();
  // No PodResources in DRA mode, and no release of partitions the journal knows no owner of:
  // after a restored or new journal those are the running VMs' (the API server, not pods, says
  // who holds them). FM is kept in step; unprepares left unfinished are driven to their end.
  core_->SyncFabricManager();
  claims_.FinishUnprepares();
  if (metrics_) {
    metrics_->registry().RecordReconcile(
        std::chrono::duration<double>(Steady::now() - started).count());
  }
}

Status DraService::Run(const std::atomic<bool>& stop) {
  if (!core_->SyncFabricManager()) {
    spdlog::warn("Fabric Manager not usable yet; its GPUs stay out of the slice until it is");
  }
  core_->CheckHealth();
  std::error_code ec;
  std::filesystem::create_directories(config_.cdi_dir, ec);
  if (ec) spdlog::warn("cannot create --cdi-dir {}: {}", config_.cdi_dir.string(), ec.message());
  for (const auto& dir :
       {config_.kubelet_registry_dir, config_.kubelet_plugins_dir / config_.dra_driver_name}) {
    for (const auto& stale : rpc::RemoveStaleTemporarySockets(dir)) {
      spdlog::info("removed {}, a temporary socket left by a plugin process that is gone",
                   stale.string());
    }
  }
  ServeSockets();
  StartSliceWatch();
  StartApiJobs();
  core_->engine().StartBackgroundVerification();
  VfioWatch vfio_watch(config_.dev_root);
  auto next_health = Steady::now() + config_.health_recheck_interval;
  auto next_reconcile = Steady::now();
  auto next_socket_check = Steady::now();
  while (!stop.load()) {
    const auto now = Steady::now();
    if (now >= next_socket_check) {
      next_socket_check = now + config_.kubelet_check_interval;
      ServeSockets();
    }
    if (now >= next_reconcile) {
      next_reconcile = now + config_.reconcile_interval;
      ReconcileOnce();
    }
    if (vfio_watch.Wait(kLoopTick) || Steady::now() >= next_health) {
      next_health = Steady::now() + config_.health_recheck_interval;
      core_->CheckHealth();
    }
    checkpointer_.Turn(core_->engine());
    if (metrics_) {
      metrics_->DraLoopTurned(*core_, server_.registered(), published_once_.load(), ApiProblem());
    }
  }
  spdlog::info("stopping: active partitions and prepared claims are left as they are");
  StopApiJobs();
  slice_watch_->Stop();
  core_->engine().StopBackgroundVerification();
  server_.Stop();
  if (Status snapshot = core_->engine().Snapshot(); !snapshot.ok()) {
    return snapshot.WithContext("saving the shutdown snapshot of journal " +
                                config_.journal.string() +
                                " failed (the journal itself is intact)");
  }
  return Status::Ok();
}

}  // namespace gfp::plugin
