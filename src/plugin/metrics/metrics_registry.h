// The metric families of SPEC §8.1 (names and label sets exact) and the small recording
// functions the core, the gRPC services and the serve loop call. Thread-safe: counters and
// histograms are recorded where things happen; gauges are published by the serve loop, so a
// scrape only serialises values already in memory and never waits for FM or the journal writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/core/core_observer.h"

namespace prometheus {
class Registry;
template <typename T>
class Family;
class Counter;
class Gauge;
class Histogram;
}  // namespace prometheus

namespace gfp::plugin::metrics {

// What the core reports (plugin/core/core_observer.h), under the names the tests use.
using PartitionOperation = core::PartitionOperation;
using DriftKind = core::DriftKind;

struct ResourceDeviceCount {
  std::string resource;  // full resource name, e.g. nvidia.com/GH100_H100_SXM5_80GB
  std::size_t healthy = 0;
  std::size_t unhealthy = 0;
};

// What the serve loop publishes for the gauges.
struct GaugeValues {
  std::vector<ResourceDeviceCount> devices;
  std::size_t partitions_active = 0;
  std::map<std::size_t, std::size_t> partitions_free;  // size -> count (sm::FreePartitionsBySize)
  bool fabric_manager_up = false;
  std::uint64_t journal_last_seq = 0;
  std::uint64_t journal_first_damaged_seq = 0;
  // DRA mode (SPEC §11); 0 in device-plugin mode.
  std::size_t dra_claims_prepared = 0;         // claims prepared per the journal
  std::int64_t resource_slice_generation = 0;  // the node's slice as last published
};

// Records what the core reports as a CoreObserver; the serve wiring hands it to the core.
class MetricsRegistry final : public core::CoreObserver {
 public:
  explicit MetricsRegistry(const std::string& version);
  ~MetricsRegistry() override;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // One Allocate call: `containers` container requests, all granted or all rejected.
  void RecordAllocate(const std::string& resource, std::size_t containers, bool granted,
                      double seconds) override;
  // One FM call that changes partitions; `fm_code` is the return code's name (FM_ST_SUCCESS).
  void RecordPartitionOperation(PartitionOperation operation, bool ok,
                                const std::string& fm_code) override;
  void RecordDrift(DriftKind kind) override;
  void RecordDevicesTakenFromListedPod() override;
  void RecordJournalAppend(double seconds);
  void RecordReconcile(double seconds);
  void RecordPodResourcesError();
  // DRA mode: one NodePrepareResources claim as kubelet sees it.
  void RecordDraPrepare(double seconds);
  // One API server request; `code` is the HTTP status, 0 when there was no answer. Verbs and
  // resources outside the ones the plugin uses count as "other", codes outside 100-599 as
  // "none", so a hostile or broken server cannot grow the label set.
  void RecordApiRequest(std::string_view verb, std::string_view resource, int code);

  void Publish(const GaugeValues& values);

  // The Prometheus text exposition of every family.
  std::string Serialize() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  prometheus::Family<prometheus::Gauge>& devices_;
  prometheus::Family<prometheus::Counter>& allocations_;
  prometheus::Family<prometheus::Histogram>& allocate_seconds_;
  prometheus::Family<prometheus::Counter>& partition_operations_;
  prometheus::Gauge& partitions_active_;
  prometheus::Family<prometheus::Gauge>& partitions_free_;
  prometheus::Gauge& fabric_manager_up_;
  prometheus::Family<prometheus::Counter>& drift_;
  prometheus::Counter& devices_taken_from_live_pods_;
  prometheus::Gauge& journal_last_seq_;
  prometheus::Gauge& journal_first_damaged_seq_;
  prometheus::Histogram& journal_append_seconds_;
  prometheus::Histogram& reconcile_seconds_;
  prometheus::Counter& pod_resources_errors_;
  prometheus::Gauge& dra_claims_prepared_;
  prometheus::Histogram& dra_prepare_seconds_;
  prometheus::Family<prometheus::Counter>& api_requests_;
  prometheus::Gauge& resource_slice_generation_;

  std::mutex publish_mu_;  // one publisher at a time; sizes published before stay at 0
  std::set<std::size_t> free_sizes_seen_;
};

}  // namespace gfp::plugin::metrics
