// The one HTTP listener of --metrics-address (SPEC §8.1): /metrics, /healthz, /readyz, 404 for
// anything else. Served by civetweb (the web server prometheus-cpp's Exposer embeds; the Exposer
// itself cannot add other paths) on its own threads, with bounded request size and timeouts.
// Handlers read only the registry and the probe state, never FM or the journal.
#pragma once

#include <memory>

#include "common/status.h"
#include "plugin/metrics/metrics_address.h"
#include "plugin/metrics/metrics_registry.h"
#include "plugin/metrics/probe_state.h"

struct mg_context;
struct mg_connection;

namespace gfp::plugin::metrics {

class HttpEndpoint {
 public:
  // Listens on `address`; registry and probes must outlive the endpoint. A bind failure (the
  // address in use, not local) is an error naming the flag value and the reason.
  static Result<std::unique_ptr<HttpEndpoint>> Start(const MetricsAddress& address,
                                                     const std::string& flag_value,
                                                     const MetricsRegistry& registry,
                                                     const ProbeState& probes);
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  int port() const { return port_; }

  // What a GET of `path` answers (the handlers' logic, without HTTP).
  struct Response {
    int status = 200;
    const char* content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  static Response Answer(const std::string& path, const MetricsRegistry& registry,
                         const ProbeState& probes);

 private:
  HttpEndpoint(const MetricsRegistry& registry, const ProbeState& probes)
      : registry_(registry), probes_(probes) {}
  static int Handle(::mg_connection* connection, void* self);

  const MetricsRegistry& registry_;
  const ProbeState& probes_;
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace gfp::plugin::metrics
