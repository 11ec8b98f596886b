// One HTTPS exchange through libcurl (SPEC §11: no hand-written HTTP or TLS). Knows nothing of
// Kubernetes: ApiClient says what to send, where, with which TLS material and limits.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// TLS material and routing, fixed for the life of a client.
struct TlsSettings {
  std::string ca_pem;                  // the only CA trusted (the system store is not used)
  std::string client_certificate_pem;  // empty: no client certificate
  std::string client_key_pem;
  std::string connect_to;  // CURLOPT_CONNECT_TO entry ("name:port:host:port"), may be empty
};

struct HttpRequest {
  const char* method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds total_timeout{0};  // 0: none (watches)
  std::chrono::milliseconds idle_timeout{0};   // 0: none; no byte for this long ends it
  std::size_t max_body_bytes = 0;              // when on_data is not set
  // Streaming: bytes are handed here with the HTTP status instead of collected; false stops
  // the transfer.
  std::function<bool(long code, std::string_view bytes)> on_data;
  // Asked several times a second; true aborts the transfer (shutdown).
  std::function<bool()> cancelled;
};

enum class HttpFailure {
  kNone,       // an answer came (code is set; a stream may have been stopped by on_data)
  kNoAnswer,   // could not connect, TLS failure, connection dropped, timed out
  kTooBig,     // the body passed max_body_bytes
  kIdle,       // no byte for idle_timeout
  kCancelled,  // cancelled() said so
};

struct HttpResponse {
  HttpFailure failure = HttpFailure::kNone;
  long code = 0;           // HTTP status, 0 when none was received
  std::string body;        // when not streaming
  std::string error;       // libcurl's explanation when failure != kNone
  bool stopped = false;    // on_data returned false
  bool timed_out = false;  // total or connect timeout
};

// Exchanges with one server under fixed TLS settings. Thread-safe: each exchange takes an idle
// libcurl handle (kept, with its open connection, for the next) or makes one.
class HttpSession {
 public:
  explicit HttpSession(TlsSettings tls);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // Performs one exchange. Errors in setting libcurl up are kInternal Statuses; everything that
  // happens on the wire is described in the HttpResponse.
  Result<HttpResponse> Perform(const HttpRequest& request);

 private:
  void* TakeHandle();
  void GiveBack(void* handle);

  TlsSettings tls_;
  std::mutex mu_;
  std::vector<void*> idle_;  // CURL*, kept opaque so libcurl's header stays in the .cc
};

}  // namespace gfp::adapters::apiserver
