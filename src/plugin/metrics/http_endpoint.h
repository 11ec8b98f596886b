// The one HTTP listener of --metrics-address (SPEC §8.1): /metrics, /healthz, /readyz, 404 for
// anything else; GET and HEAD only (405 with `Allow: GET, HEAD` otherwise). Served by GNU
// libmicrohttpd on one internal epoll thread: a connection that is silent or sends a byte at a
// time holds no thread (only its buffer, at most 16 KiB with the headers, for at most 10 s), so
// it cannot delay kubelet's probes; connections are capped (1024, 128 per client address).
// Handlers read only the registry and the probe state, never FM or the journal.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "plugin/metrics/metrics_address.h"
#include "plugin/metrics/metrics_registry.h"
#include "plugin/metrics/probe_state.h"

struct MHD_Daemon;

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

  // The port bound (the one picked when the address said port 0).
  int port() const { return port_; }

  // What a GET of `path` answers (the handlers' logic, without HTTP).
  struct Response {
    int status = 200;
    const char* content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  static Response Answer(const std::string& path, const MetricsRegistry& registry,
                         const ProbeState& probes);
  // What a request answers: Answer for GET and HEAD (HTTP leaves out HEAD's body), 405 for any
  // other method.
  Response Respond(std::string_view method, const std::string& path) const;

 private:
  HttpEndpoint(const MetricsRegistry& registry, const ProbeState& probes)
      : registry_(registry), probes_(probes) {}

  const MetricsRegistry& registry_;
  const ProbeState& probes_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace gfp::plugin::metrics
