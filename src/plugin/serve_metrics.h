// Everything --metrics-address adds to `serve`, in one object the Service holds (null when the
// flag is off): the registry, the probe state, the HTTP listener and the publisher the serve
// loop calls once per turn.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/core/plugin_core.h"
#include "plugin/core_gauges.h"
#include "plugin/metrics/http_endpoint.h"
#include "plugin/metrics/metrics_registry.h"
#include "plugin/metrics/probe_state.h"
#include "plugin/rpc/resource_server.h"

namespace gfp::plugin {

class ServeMetrics {
 public:
  // Parses `address` (the flag value) and listens on it. Called before the journal is opened,
  // so an address in use refuses the start without side effects.
  static Result<std::unique_ptr<ServeMetrics>> Start(const std::string& address,
                                                     const std::string& version,
                                                     std::chrono::milliseconds reconcile_interval);

  // Makes the registry the core's observer (Allocate, FM calls, drift) and hooks the engine's
  // journal appends to it. The core must not outlive this object.
  void Attach(core::PluginCore& core);

  // Once per serve-loop turn: the loop is alive, and gauges/readiness when they changed.
  void LoopTurned(core::PluginCore& core,
                  const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers);

  // The same for the DRA loop (SPEC §11): ready once the DRA plugin is registered with kubelet
  // (NotifyRegistrationStatus(registered=true)) and the ResourceSlice was published once since
  // the start; a later API server outage (slice_published false again) keeps it ready.
  // `api_problem`: why the API server was last not usable (empty: it was).
  void DraLoopTurned(core::PluginCore& core, bool registered, bool slice_published,
                     const std::string& api_problem);

  metrics::MetricsRegistry& registry() { return registry_; }
  int port() const { return endpoint_ ? endpoint_->port() : 0; }

 private:
  ServeMetrics(const std::string& version, std::chrono::milliseconds reconcile_interval);

  metrics::MetricsRegistry registry_;
  metrics::ProbeState probes_;
  CorePublisher publisher_;
  bool slice_published_once_ = false;                // DRA mode, the DRA loop's thread only
  std::unique_ptr<metrics::HttpEndpoint> endpoint_;  // last: stopped before what it reads
};

}  // namespace gfp::plugin
