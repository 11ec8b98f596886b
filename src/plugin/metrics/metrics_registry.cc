#include "plugin/metrics/metrics_registry.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>

namespace gfp::plugin::metrics {
namespace {

using prometheus::Histogram;

// Allocate: an fsync or two, plus FM calls of up to seconds when FM is slow.
const Histogram::BucketBoundaries kAllocateBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                      0.25,  0.5,    1,     2.5,  5,     10,   30};
// One durable append: the fsync floor of the disk.
const Histogram::BucketBoundaries kAppendBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                    0.01,   0.025,   0.05,   0.1,   0.25,   1};
// One reconciliation pass: a PodResources List, a few appends, FM calls.
const Histogram::BucketBoundaries kReconcileBuckets = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                       0.5,   1,     2.5,  5,     10,   30};

const char* OperationName(PartitionOperation operation) {
  switch (operation) {
    case PartitionOperation::kActivate:
      return "activate";
    case PartitionOperation::kDeactivate:
      return "deactivate";
    case PartitionOperation::kResync:
      return "resync";
  }
  return "unknown";
}

const char* DriftName(DriftKind kind) {
  return kind == DriftKind::kActivatedElsewhere ? "activated_elsewhere" : "lost";
}

// The label values of gpu_fabric_api_requests_total: what the plugin asks for (SPEC §11's
// ClusterRole), anything else "other"; an HTTP status, or "none" without an answer.
constexpr std::array<std::string_view, 7> kApiVerbs = {"get",    "list",  "watch", "create",
                                                       "update", "patch", "delete"};
constexpr std::array<std::string_view, 3> kApiResources = {"resourceclaims", "resourceslices",
                                                           "nodes"};

template <std::size_t N>
std::string Bounded(std::string_view value, const std::array<std::string_view, N>& known) {
  const bool listed = std::find(known.begin(), known.end(), value) != known.end();
  return std::string(listed ? value : std::string_view("other"));
}

std::string ApiCode(int code) { return code >= 100 && code <= 599 ? std::to_string(code) : "none"; }

prometheus::Family<prometheus::Gauge>& Gauges(prometheus::Registry& r, const char* name,
                                              const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

prometheus::Family<prometheus::Counter>& Counters(prometheus::Registry& r, const char* name,
                                                  const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

prometheus::Family<prometheus::Histogram>& Histograms(prometheus::Registry& r, const char* name,
                                                      const char* help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace

MetricsRegistry::MetricsRegistry(const std::string& version)
    : registry_(std::make_shared<prometheus::Registry>()),
      build_info_(Gauges(*registry_, "gpu_fabric_build_info", "Build of the plugin (always 1)")),
      devices_(Gauges(*registry_, "gpu_fabric_devices", "Devices advertised to kubelet")),
      allocations_(Counters(*registry_, "gpu_fabric_allocations_total",
                            "Allocate container requests by result")),
      allocate_seconds_(Histograms(*registry_, "gpu_fabric_allocate_seconds",
                                   "Allocate call latency as kubelet sees it")),
      partition_operations_(Counters(*registry_, "gpu_fabric_partition_operations_total",
                                     "Fabric Manager calls that change partitions")),
      partitions_active_(
          Gauges(*registry_, "gpu_fabric_partitions_active", "Partitions active per the journal")
              .Add({})),
      partitions_free_(Gauges(*registry_, "gpu_fabric_partitions_free",
                              "Supported, non-degraded partitions of that size whose GPUs are "
                              "all free and healthy")),
      fabric_manager_up_(Gauges(*registry_, "gpu_fabric_fabric_manager_up",
                                "1 while Fabric Manager is connected and usable (0 when disabled)")
                             .Add({})),
      drift_(Counters(*registry_, "gpu_fabric_drift_total", "Drift found against Fabric Manager")),
      devices_taken_from_live_pods_(
          Counters(*registry_, "gpu_fabric_devices_taken_from_live_pods_total",
                   "Granted Allocate containers that took devices a pod held in kubelet's last "
                   "PodResources listing (once per such pod)")
              .Add({})),
      journal_last_seq_(
          Gauges(*registry_, "gpu_fabric_journal_last_seq", "Seq of the newest journal event")
              .Add({})),
      journal_first_damaged_seq_(
          Gauges(*registry_, "gpu_fabric_journal_first_damaged_seq",
                 "0 while the whole chain verifies; else the first bad seq (background "
                 "verification)")
              .Add({})),
      journal_append_seconds_(
          Histograms(*registry_, "gpu_fabric_journal_append_seconds", "One durable journal append")
              .Add({}, kAppendBuckets)),
      reconcile_seconds_(
          Histograms(*registry_, "gpu_fabric_reconcile_seconds", "One reconciliation pass")
              .Add({}, kReconcileBuckets)),
      pod_resources_errors_(Counters(*registry_, "gpu_fabric_pod_resources_errors_total",
                                     "Failed PodResources List calls")
                                .Add({})),
      dra_claims_prepared_(Gauges(*registry_, "gpu_fabric_dra_claims_prepared",
                                  "DRA claims prepared per the journal")
                               .Add({})),
      dra_prepare_seconds_(Histograms(*registry_, "gpu_fabric_dra_prepare_seconds",
                                      "One NodePrepareResources claim as kubelet sees it")
                               .Add({}, kAllocateBuckets)),
      api_requests_(Counters(*registry_, "gpu_fabric_api_requests_total",
                             "API server requests by verb, resource and HTTP status")),
      resource_slice_generation_(Gauges(*registry_, "gpu_fabric_resource_slice_generation",
                                        "Generation of the node's ResourceSlice as last published")
                                     .Add({})) {
  build_info_.Add({{"version", version}}).Set(1);
  // Both kinds from the start, so an alert on their rate sees 0 rather than no series.
  drift_.Add({{"kind", DriftName(DriftKind::kActivatedElsewhere)}});
  drift_.Add({{"kind", DriftName(DriftKind::kLost)}});
}

MetricsRegistry::~MetricsRegistry() = default;

void MetricsRegistry::RecordAllocate(const std::string& resource, std::size_t containers,
                                     bool granted, double seconds) {
  allocations_.Add({{"resource", resource}, {"result", granted ? "granted" : "rejected"}})
      .Increment(static_cast<double>(containers));
  allocate_seconds_.Add({{"resource", resource}}, kAllocateBuckets).Observe(seconds);
}

void MetricsRegistry::RecordPartitionOperation(PartitionOperation operation, bool ok,
                                               const std::string& fm_code) {
  partition_operations_
      .Add({{"operation", OperationName(operation)},
            {"result", ok ? "ok" : "failed"},
            {"fm_code", fm_code}})
      .Increment();
}

void MetricsRegistry::RecordDrift(DriftKind kind) {
  drift_.Add({{"kind", DriftName(kind)}}).Increment();
}

void MetricsRegistry::RecordDevicesTakenFromListedPod() {
  devices_taken_from_live_pods_.Increment();
}

void MetricsRegistry::RecordJournalAppend(double seconds) {
  journal_append_seconds_.Observe(seconds);
}

void MetricsRegistry::RecordReconcile(double seconds) { reconcile_seconds_.Observe(seconds); }

void MetricsRegistry::RecordPodResourcesError() { pod_resources_errors_.Increment(); }

void MetricsRegistry::RecordDraPrepare(double seconds) { dra_prepare_seconds_.Observe(seconds); }

void MetricsRegistry::RecordApiRequest(std::string_view verb, std::string_view resource, int code) {
  api_requests_
      .Add({{"verb", Bounded(verb, kApiVerbs)},
            {"resource", Bounded(resource, kApiResources)},
            {"code", ApiCode(code)}})
      .Increment();
}

void MetricsRegistry::Publish(const GaugeValues& values) {
  std::lock_guard lock(publish_mu_);
  for (const auto& r : values.devices) {
    devices_.Add({{"resource", r.resource}, {"health", "healthy"}})
        .Set(static_cast<double>(r.healthy));
    devices_.Add({{"resource", r.resource}, {"health", "unhealthy"}})
        .Set(static_cast<double>(r.unhealthy));
  }
  partitions_active_.Set(static_cast<double>(values.partitions_active));
  for (const std::size_t size : free_sizes_seen_) {
    if (!values.partitions_free.count(size)) {
      partitions_free_.Add({{"size", std::to_string(size)}}).Set(0);
    }
  }
  for (const auto& [size, count] : values.partitions_free) {
    partitions_free_.Add({{"size", std::to_string(size)}}).Set(static_cast<double>(count));
    free_sizes_seen_.insert(size);
  }
  fabric_manager_up_.Set(values.fabric_manager_up ? 1 : 0);
  journal_last_seq_.Set(static_cast<double>(values.journal_last_seq));
  journal_first_damaged_seq_.Set(static_cast<double>(values.journal_first_damaged_seq));
  dra_claims_prepared_.Set(static_cast<double>(values.dra_claims_prepared));
  resource_slice_generation_.Set(static_cast<double>(values.resource_slice_generation));
}

std::string MetricsRegistry::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace gfp::plugin::metrics
