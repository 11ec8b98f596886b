#include "plugin/metrics/http_endpoint.h"

#include <civetweb.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <mutex>

#include "common/text_escape.h"

namespace gfp::plugin::metrics {
namespace {

// Prometheus scrapes and kubelet probes: small requests, a few at a time.
constexpr const char* kThreads = "2";
constexpr const char* kMaxRequestBytes = "8192";
constexpr const char* kRequestTimeoutMs = "5000";

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

// What civetweb logged while starting on this thread: its start error alone is only "Failed to
// setup server ports", the reason (address in use, not local) is in the log.
thread_local std::string t_start_log;

int LogCivetweb(const ::mg_connection*, const char* message) {
  spdlog::debug("metrics endpoint: {}", EscapeAndTruncate(message, 512));
  const std::string text = message;
  if (text != "Failed to setup server ports" && t_start_log.size() < 1024) {
    t_start_log += (t_start_log.empty() ? "" : "; ") + text;
  }
  return 1;  // handled: civetweb prints nothing itself
}

void InitCivetwebOnce() {
  static std::once_flag once;
  std::call_once(once, [] { mg_init_library(0); });
}

}  // namespace

HttpEndpoint::Response HttpEndpoint::Answer(const std::string& path,
                                            const MetricsRegistry& registry,
                                            const ProbeState& probes) {
  if (path == "/metrics") {
    return {200, "text/plain; version=0.0.4; charset=utf-8", registry.Serialize()};
  }
  if (path == "/healthz") {
    ProbeAnswer a = probes.Healthz(ProbeState::Steady::now());
    return {a.status, "text/plain; charset=utf-8", std::move(a.body)};
  }
  if (path == "/readyz") {
    ProbeAnswer a = probes.Readyz();
    return {a.status, "text/plain; charset=utf-8", std::move(a.body)};
  }
  return {404, "text/plain; charset=utf-8",
          "not found: the paths are /metrics, /healthz, /readyz\n"};
}

int HttpEndpoint::Handle(mg_connection* connection, void* self) {
  const auto& endpoint = *static_cast<const HttpEndpoint*>(self);
  const mg_request_info* info = mg_get_request_info(connection);
  const bool head = std::strcmp(info->request_method, "HEAD") == 0;
  Response r;
  if (!head && std::strcmp(info->request_method, "GET") != 0) {
    r = {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
  } else {
    r = Answer(info->local_uri ? info->local_uri : "", endpoint.registry_, endpoint.probes_);
  }
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            r.status, Reason(r.status), r.content_type, r.body.size());
  if (!head) mg_write(connection, r.body.data(), r.body.size());
  return r.status;
}

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const MetricsAddress& address,
                                                          const std::string& flag_value,
                                                          const MetricsRegistry& registry,
                                                          const ProbeState& probes) {
  InitCivetwebOnce();
  std::unique_ptr<HttpEndpoint> endpoint(new HttpEndpoint(registry, probes));
  const std::string ports = address.ListeningPortsOption();
  const char* options[] = {"listening_ports",
                           ports.c_str(),
                           "num_threads",
                           kThreads,
                           "max_request_size",
                           kMaxRequestBytes,
                           "request_timeout_ms",
                           kRequestTimeoutMs,
                           "enable_keep_alive",
                           "no",
                           nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = LogCivetweb;
  mg_init_data init{&callbacks, endpoint.get(), options};
  char error_text[256] = "";
  mg_error_data error{nullptr, error_text, sizeof error_text};
  t_start_log.clear();
  endpoint->context_ = mg_start2(&init, &error);
  if (!endpoint->context_) {
    // The log says why ("cannot bind to 127.0.0.1:9402: 98 (Address already in use)").
    const std::string why = t_start_log.empty() ? std::string(error_text) : t_start_log;
    return Unavailable("--metrics-address=" + EscapeAndTruncate(flag_value, 128) +
                       ": cannot listen: " + EscapeAndTruncate(why, 512));
  }
  mg_set_request_handler(endpoint->context_, "/", &HttpEndpoint::Handle, endpoint.get());
  mg_server_port bound[4]{};
  if (mg_get_server_ports(endpoint->context_, 4, bound) >= 1) endpoint->port_ = bound[0].port;
  spdlog::info("metrics endpoint listening on {} (/metrics, /healthz, /readyz)",
               address.Describe(endpoint->port_));
  return endpoint;
}

HttpEndpoint::~HttpEndpoint() {
  if (context_) mg_stop(context_);
}

}  // namespace gfp::plugin::metrics
