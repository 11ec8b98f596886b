#include "plugin/service.h"

#include <spdlog/spdlog.h>

#include "adapters/kubelet/grpc_lifetime.h"
#include "plugin/build_core.h"
#include "plugin/core/log_text.h"
#include "plugin/core_gauges.h"
#include "statemachine/free_partitions.h"

namespace gfp::plugin {
namespace {

using Steady = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kLoopTick{100};
constexpr std::chrono::milliseconds kRegisterDeadline{5000};
constexpr std::chrono::milliseconds kMaxRegisterBackoff{5000};
}  // namespace

Result<std::unique_ptr<Service>> Service::Create(ServeConfig config, const std::string& version,
                                                 core::Clock clock) {
  adapters::kubelet::KeepGrpcInitialized();
  std::unique_ptr<ServeMetrics> metrics;  // listening first: a busy port changes nothing
  if (!config.metrics_address.empty()) {
    GFP_ASSIGN_OR_RETURN(
        metrics, ServeMetrics::Start(config.metrics_address, version, config.reconcile_interval));
  }
  GFP_ASSIGN_OR_RETURN(auto core, BuildCore(config, version, std::move(clock)));
  if (metrics) metrics->Attach(*core);
  return std::unique_ptr<Service>(
      new Service(std::move(config), std::move(metrics), std::move(core)));
}

Service::Service(ServeConfig config, std::unique_ptr<ServeMetrics> metrics,
                 std::unique_ptr<core::PluginCore> core)
    : config_(std::move(config)),
      metrics_(std::move(metrics)),
      core_(std::move(core)),
      pod_resources_(adapters::kubelet::PodResourcesClientOptions{
          config_.pod_resources_socket.string(), std::chrono::milliseconds(10'000),
          16 * 1024 * 1024}) {
  if (!config_.node_labels_file.empty())
    node_labels_.emplace(config_.node_labels_file, config_.journal);
}

Service::~Service() {
  for (auto& server : servers_) server->Stop();
}

void Service::RestartServers(const std::string& reason) {
  spdlog::warn("{}: serving and registering again", reason);
  core_->ObserveKubeletRestart(reason);
  for (auto& server : servers_) {
    server->Stop();
    Status status = server->Serve();
    if (!status.ok()) server->ReportServeFailure(status);
  }
  register_backoff_ = std::chrono::milliseconds(250);
  next_register_ = Steady::now();
}

void Service::RegisterPending() {
  if (Steady::now() < next_register_) return;
  bool failed = false;
  for (auto& server : servers_) {
    if (!server->serving()) {
      Status status = server->Serve();
      if (!status.ok()) {
        server->ReportServeFailure(status);
        failed = true;
        continue;
      }
    }
    if (server->registered()) continue;
    // The kubelet.sock we register with: a later change of it means the kubelet restarted.
    // (Recorded only here: refreshing it on every pass would hide a re-created kubelet.sock.)
    const auto kubelet_socket = rpc::IdentityOf(config_.device_plugin_dir / "kubelet.sock");
    Status status = server->Register(kRegisterDeadline);
    if (!status.ok()) {
      spdlog::warn("{} (retrying in {} ms)", core::LogText(status.message(), 1024),
                   register_backoff_.count());
      failed = true;
    } else {
      kubelet_socket_ = kubelet_socket;
    }
  }
  if (failed) {
    next_register_ = Steady::now() + register_backoff_;
    register_backoff_ = std::min(register_backoff_ * 2, kMaxRegisterBackoff);
  } else {
    register_backoff_ = std::chrono::milliseconds(250);
  }
}

void Service::ReconcileOnce() {
  const auto started = Steady::now();
  auto listed = pod_resources_.List();
  if (!listed.ok()) {
    if (metrics_) metrics_->registry().RecordPodResourcesError();
    // A failed List releases nothing; Fabric Manager is still kept in step.
    spdlog::warn("PodResources List failed, nothing released this round: {}",
                 core::LogText(listed.status().message(), 1024));
    core_->SyncFabricManager();
  } else {
    core_->Reconcile(*listed);
  }
  if (metrics_) {
    metrics_->registry().RecordReconcile(
        std::chrono::duration<double>(Steady::now() - started).count());
  }
}

void Service::UpdateNodeLabels() {
  if (!node_labels_) return;
  node_labels_->Update(SchedulableFreePartitions(*core_), Steady::now());
}

Status Service::Run(const std::atomic<bool>& stop) {
  if (!core_->SyncFabricManager()) {
    spdlog::warn("Fabric Manager not usable yet; its devices stay Unhealthy until it is");
  }
  core_->CheckHealth();
  UpdateNodeLabels();
  for (const auto& stale : rpc::RemoveStaleTemporarySockets(config_.device_plugin_dir)) {
    spdlog::info("removed {}, a temporary socket left by a plugin process that is gone",
                 stale.string());
  }
  for (const auto& resource : core_->inventory().resources) {
    servers_.push_back(
        std::make_unique<rpc::ResourceServer>(*core_, resource.naming, config_.device_plugin_dir));
    GFP_RETURN_IF_ERROR(servers_.back()->Serve());
  }
  next_register_ = Steady::now();
  core_->engine().StartBackgroundVerification();  // journal: full chain check, logs its result
  VfioWatch vfio_watch(config_.dev_root);
  auto next_health = Steady::now() + config_.health_recheck_interval;
  auto next_reconcile = Steady::now() + config_.reconcile_interval;
  auto next_kubelet_check = Steady::now();

  while (!stop.load()) {
    RegisterPending();
    const auto now = Steady::now();
    if (now >= next_kubelet_check) {
      next_kubelet_check = now + config_.kubelet_check_interval;
      const auto kubelet_socket = rpc::IdentityOf(config_.device_plugin_dir / "kubelet.sock");
      bool lost = false;
      for (const auto& server : servers_) lost |= server->SocketLost();
      if (lost) {
        RestartServers("our socket was removed (kubelet restarted)");
      } else if (kubelet_socket && kubelet_socket_ && *kubelet_socket != *kubelet_socket_) {
        RestartServers("kubelet.sock was re-created (kubelet restarted)");
      }
    }
    if (now >= next_reconcile) {
      next_reconcile = now + config_.reconcile_interval;
      ReconcileOnce();
    }
    const bool vfio_changed = vfio_watch.Wait(kLoopTick);
    if (vfio_changed || Steady::now() >= next_health) {
      next_health = Steady::now() + config_.health_recheck_interval;
      core_->CheckHealth();
    }
    // Journal: keep the history in the main file, not only in the -wal.
    checkpointer_.Turn(core_->engine());
    UpdateNodeLabels();
    if (metrics_) metrics_->LoopTurned(*core_, servers_);  // metrics: gauges, probes
  }
  spdlog::info("stopping: active partitions are left as they are");
  core_->engine().StopBackgroundVerification();  // journal
  for (auto& server : servers_) server->Stop();
  // The snapshot only shortens the next start's replay: the journal is intact without it, but
  // the failure (a full disk, most often) is reported, not hidden behind "stopped cleanly".
  if (Status snapshot = core_->engine().Snapshot(); !snapshot.ok()) {
    return snapshot.WithContext("saving the shutdown snapshot of journal " +
                                config_.journal.string() +
                                " failed (the journal itself is intact; the next start replays "
                                "the events since the last snapshot)");
  }
  return Status::Ok();
}

}  // namespace gfp::plugin
