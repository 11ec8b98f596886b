// What the serve loop publishes to the metrics registry and the probes: gathered from the core
// and the gRPC servers (the wiring knows both; plugin/metrics knows neither) on the serve loop's
// thread (it may wait for the engine's lock behind a journal fsync; the
// HTTP threads never do).
#pragma once

#include <memory>
#include <vector>

#include "plugin/core/plugin_core.h"
#include "plugin/metrics/metrics_registry.h"
#include "plugin/metrics/probe_state.h"
#include "plugin/rpc/resource_server.h"

namespace gfp::plugin {

metrics::GaugeValues CollectGauges(core::PluginCore& core);

metrics::ReadinessInputs CollectReadiness(
    core::PluginCore& core, const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers);

// Publishes gauges and readiness when something they depend on changed since the last call
// (the core's device-view version, the journal's last seq, FM usability, journal damage).
class CorePublisher {
 public:
  CorePublisher(metrics::MetricsRegistry& registry, metrics::ProbeState& probes)
      : registry_(registry), probes_(probes) {}
  void PublishIfChanged(core::PluginCore& core,
                        const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers);

 private:
  metrics::MetricsRegistry& registry_;
  metrics::ProbeState& probes_;
  bool published_ = false;
  std::uint64_t version_ = 0;
  std::uint64_t last_seq_ = 0;
  std::uint64_t first_damaged_seq_ = 0;
  std::string not_ready_;
};

}  // namespace gfp::plugin
