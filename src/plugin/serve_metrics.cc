#include "plugin/serve_metrics.h"

namespace gfp::plugin {

ServeMetrics::ServeMetrics(const std::string& version, std::chrono::milliseconds reconcile_interval)
    : registry_(version),
      probes_(reconcile_interval, metrics::ProbeState::Steady::now()),
      publisher_(registry_, probes_) {}

Result<std::unique_ptr<ServeMetrics>> ServeMetrics::Start(
    const std::string& address, const std::string& version,
    std::chrono::milliseconds reconcile_interval) {
  GFP_ASSIGN_OR_RETURN(const metrics::MetricsAddress parsed, metrics::ParseMetricsAddress(address));
  std::unique_ptr<ServeMetrics> metrics(new ServeMetrics(version, reconcile_interval));
  GFP_ASSIGN_OR_RETURN(
      metrics->endpoint_,
      metrics::HttpEndpoint::Start(parsed, address, metrics->registry_, metrics->probes_));
  return metrics;
}

void ServeMetrics::Attach(core::PluginCore& core) {
  core.SetObserver(&registry_);
  core.engine().SetAppendObserver(
      [registry = &registry_](double seconds) { registry->RecordJournalAppend(seconds); });
}

void ServeMetrics::LoopTurned(core::PluginCore& core,
                              const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers) {
  probes_.LoopTurned(metrics::ProbeState::Steady::now());
  publisher_.PublishIfChanged(core, CollectReadiness(core, servers));
}

void ServeMetrics::DraLoopTurned(core::PluginCore& core, bool registered, bool slice_published,
                                 const std::string& api_problem) {
  probes_.LoopTurned(metrics::ProbeState::Steady::now());
  slice_published_once_ = slice_published_once_ || slice_published;
  publisher_.PublishIfChanged(
      core, CollectDraReadiness(core, registered, slice_published_once_, api_problem));
}

}  // namespace gfp::plugin
