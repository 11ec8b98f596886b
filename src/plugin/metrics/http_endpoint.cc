#include "plugin/metrics/http_endpoint.h"

#include <microhttpd.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <thread>

#include "common/text_escape.h"
#include "plugin/metrics/listen_address.h"

namespace gfp::plugin::metrics {
namespace {

// Prometheus scrapes and kubelet probes: small requests, a few at a time. A connection's memory
// holds its request line and headers, so it bounds them (a bigger request is refused).
constexpr unsigned kConnectionTimeoutSeconds = 10;
constexpr std::size_t kConnectionMemoryBytes = 16 * 1024;
constexpr unsigned kConnectionLimit = 1024;
constexpr unsigned kPerIpConnectionLimit = 128;

// What libmicrohttpd logged while starting on this thread: MHD_start_daemon says only "no", the
// reason ("Failed to bind to port 9402: Address already in use") is in its log.
thread_local std::string* t_start_log = nullptr;

void LogMicrohttpd(void*, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, args);
  std::string line = text;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  spdlog::debug("metrics endpoint: {}", EscapeAndTruncate(line, 512));
  if (t_start_log != nullptr && t_start_log->size() < 1024) {
    *t_start_log += (t_start_log->empty() ? "" : "; ") + line;
  }
}

MHD_Result Serve(void* self, MHD_Connection* connection, const char* url, const char* method,
                 const char* /*version*/, const char* /*upload_data*/,
                 std::size_t* /*upload_data_size*/, void** /*request_state*/) {
  const auto& endpoint = *static_cast<const HttpEndpoint*>(self);
  HttpEndpoint::Response r = endpoint.Respond(method, url);
  // MHD sends Content-Length and, for HEAD, leaves the body out.
  MHD_Response* response =
      MHD_create_response_from_buffer(r.body.size(), r.body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  if (r.status == MHD_HTTP_METHOD_NOT_ALLOWED) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  }
  const MHD_Result queued =
      MHD_queue_response(connection, static_cast<unsigned>(r.status), response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Daemon* StartDaemon(const ListenAddress& listen, std::uint16_t port, HttpEndpoint* endpoint) {
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
  if (listen.dual_stack) {
    flags |= MHD_USE_DUAL_STACK;
  } else if (listen.ipv6) {
    flags |= MHD_USE_IPv6;
  }
  // The logger must be the first option, or MHD logs the options before it to stderr itself.
  return MHD_start_daemon(flags, port, nullptr, nullptr, &Serve, endpoint,             //
                          MHD_OPTION_EXTERNAL_LOGGER, &LogMicrohttpd, nullptr,         //
                          MHD_OPTION_SOCK_ADDR, listen.get(),                          //
                          MHD_OPTION_CONNECTION_TIMEOUT, kConnectionTimeoutSeconds,    //
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemoryBytes,  //
                          MHD_OPTION_CONNECTION_LIMIT, kConnectionLimit,               //
                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, kPerIpConnectionLimit,   //
                          MHD_OPTION_END);
}

// libmicrohttpd 0.9.75 (Debian 12's) can crash in MHD_stop_daemon while it still tears down a
// connection whose request it refused as too large (HttpEndpointStopTest: 7 runs of 10). Such a
// connection ends within milliseconds, so the stop waits for the open connections to end first,
// a bounded time: a silent client holding one open only delays the stop by that much.
void WaitForConnectionsToEnd(MHD_Daemon* daemon, std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (info == nullptr || info->num_connections == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
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

HttpEndpoint::Response HttpEndpoint::Respond(std::string_view method,
                                             const std::string& path) const {
  if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
    return {405, "text/plain; charset=utf-8", "only GET and HEAD\n"};
  }
  return Answer(path, registry_, probes_);
}

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(const MetricsAddress& address,
                                                          const std::string& flag_value,
                                                          const MetricsRegistry& registry,
                                                          const ProbeState& probes) {
  std::unique_ptr<HttpEndpoint> endpoint(new HttpEndpoint(registry, probes));
  const ListenAddress listen = ListenAddressOf(address, Ipv6Available());
  std::string start_log;
  t_start_log = &start_log;
  endpoint->daemon_ = StartDaemon(listen, address.port, endpoint.get());
  t_start_log = nullptr;
  if (endpoint->daemon_ == nullptr) {
    const std::string why = start_log.empty() ? "the HTTP server did not start" : start_log;
    return Unavailable("--metrics-address=" + EscapeAndTruncate(flag_value, 128) +
                       ": cannot listen: " + EscapeAndTruncate(why, 512));
  }
  const MHD_DaemonInfo* bound = MHD_get_daemon_info(endpoint->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  if (bound != nullptr) endpoint->port_ = bound->port;
  spdlog::info("metrics endpoint listening on {} (/metrics, /healthz, /readyz)",
               DescribeListenAddress(listen, endpoint->port_));
  return endpoint;
}

HttpEndpoint::~HttpEndpoint() {
  if (daemon_ == nullptr) return;
  WaitForConnectionsToEnd(daemon_, std::chrono::milliseconds(300));
  MHD_stop_daemon(daemon_);
}

}  // namespace gfp::plugin::metrics
