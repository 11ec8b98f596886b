// What the serve loop publishes to the metrics registry and the probes: gathered from the core
// and the gRPC servers (the wiring knows both; plugin/metrics knows neither) on the serve loop's
// thread (it may wait for the engine's lock behind a journal fsync; the
// HTTP threads never do).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "plugin/core/plugin_core.h"
#include "plugin/metrics/metrics_registry.h"
#include "plugin/metrics/probe_state.h"
#include "plugin/rpc/resource_server.h"
#include "statemachine/state.h"

namespace gfp::plugin {

metrics::GaugeValues CollectGauges(core::PluginCore& core);

// SPEC §8.1 gpu_fabric_partitions_free and §8.2's labels: partitions free AND healthy. While
// Fabric Manager is not usable, every device it manages is Unhealthy to kubelet (the core's
// device view), so none is free: every size of the table stays, with 0.
std::map<std::size_t, std::size_t> SchedulableFreePartitions(core::PluginCore& core);

// The gauges that follow from the journaled state alone (CollectGauges adds devices and FM).
void FillStateGauges(const sm::State& state, metrics::GaugeValues& values);

// DRA claims prepared per the journal: a live allocation for a claim whose files were written.
std::size_t PreparedClaims(const sm::State& state);

// Device-plugin mode: every resource registered with kubelet.
metrics::ReadinessInputs CollectReadiness(
    core::PluginCore& core, const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers);

// DRA mode (SPEC §11): the DRA plugin registered with kubelet, the slice published once, the
// API server usable now.
metrics::ReadinessInputs CollectDraReadiness(core::PluginCore& core, bool registered,
                                             bool slice_published, const std::string& api_problem);

// Publishes gauges and readiness when something they depend on changed since the last call
// (the core's device-view version, the journal's last seq, FM usability, journal damage).
class CorePublisher {
 public:
  CorePublisher(metrics::MetricsRegistry& registry, metrics::ProbeState& probes)
      : registry_(registry), probes_(probes) {}
  void PublishIfChanged(core::PluginCore& core, const metrics::ReadinessInputs& readiness);

 private:
  metrics::MetricsRegistry& registry_;
  metrics::ProbeState& probes_;
  bool published_ = false;
  std::uint64_t version_ = 0;
  std::uint64_t last_seq_ = 0;
  std::uint64_t first_damaged_seq_ = 0;
  std::string not_ready_;
  std::string journal_problem_;  // logged once when it appears
};

}  // namespace gfp::plugin
