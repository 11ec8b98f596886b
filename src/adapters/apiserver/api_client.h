// The Kubernetes API server client of DRA mode (SPEC §11 "API server client"): HTTPS through
// libcurl with the config's CA (always checked), a bearer token (a token file re-read when it
// rotates) or a client certificate; timeouts on every call but watches, which end when idle;
// retries with capped, jittered exponential backoff; 401/403 logged once per change; every
// request counted through an observer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "adapters/apiserver/api_call.h"
#include "adapters/apiserver/api_config.h"
#include "adapters/apiserver/auth_failure_log.h"
#include "adapters/apiserver/backoff.h"
#include "adapters/apiserver/http_transfer.h"
#include "adapters/apiserver/token_file.h"
#include "adapters/apiserver/watch_event.h"
#include "common/status.h"

namespace gfp::adapters::apiserver {

// Told about every request (metrics: gpu_fabric_api_requests_total{verb, resource, code}).
class ApiCallObserver {
 public:
  virtual ~ApiCallObserver() = default;
  virtual void OnApiCall(Verb verb, const std::string& resource, int code) = 0;  // 0: no answer
};

// When set, a call (its retries included) ends by then.
using CallDeadline = std::optional<std::chrono::steady_clock::time_point>;

struct ApiClientOptions {
  std::chrono::milliseconds timeout{10000};  // every call but watches (SPEC: <= 10 s)
  int attempts = 4;                          // per Call: no answer, 429 and 5xx are retried
  std::chrono::milliseconds backoff_base{200}, backoff_cap{5000};  // capped exponential, jittered
  std::size_t max_body_bytes = 16u << 20;        // a bigger answer is refused, not buffered
  std::size_t max_watch_event_bytes = 4u << 20;  // one watch line
  // No byte for this long: the watch ends (the API server ends watches after 5-10 minutes and
  // sends bookmarks about every minute, so a silent minute and a half means a dead connection).
  std::chrono::milliseconds watch_idle_timeout{90000};
  // Tests: replaces the wait between attempts (recording it), and the jitter source (a number
  // in [0, 1)). Unset: a real wait that Cancel() ends, and a seeded Mersenne Twister.
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<double()> unit_random;
};

// Ends one watcher's watches and waits without touching the client's other users (ListWatcher).
class StopFlag {
 public:
  void Stop();
  bool stopped() const { return stopped_.load(); }
  // Waits up to `delay`; false when stopped before or during the wait.
  bool SleepFor(std::chrono::milliseconds delay);

 private:
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

class ApiClient {
 public:
  using WatchEvent = apiserver::WatchEvent;

  static Result<std::unique_ptr<ApiClient>> Create(ApiServerConfig config,
                                                   ApiClientOptions options = {});

  // Sends `call`, retrying as the options say. An error only when never answered (Unavailable
  // naming the verb, resource and why), when the answer is bigger than max_body_bytes
  // (ResourceExhausted) or when no credential could be read; any HTTP status is an answer.
  // With a deadline, every attempt and the waits between them end by then: a caller that
  // answers someone else (kubelet's NodePrepareResources) bounds the call, retries included.
  Result<ApiAnswer> Call(const ApiCall& call, CallDeadline deadline = std::nullopt);

  // Streams `call` (verb kWatch, path with ?watch=true&resourceVersion=...), calling on_event
  // for each event line; returns when the stream ends, on_event returns false, Cancel() is
  // called, `stop` (optional) is stopped, or on error. An HTTP error answer (410 Gone included)
  // is handed to on_event as one ERROR event carrying the answer's Status object, then returned
  // as a FailedPrecondition naming the code. Not retried: the caller resumes or relists.
  Status Watch(const ApiCall& call, const std::function<bool(const WatchEvent&)>& on_event,
               StopFlag* stop = nullptr);

  // Ends current and future watches and backoff sleeps promptly (shutdown); a Call in flight
  // runs to its timeout but is not retried, and a later Call is not sent.
  void Cancel();
  bool cancelled() const { return cancel_.stopped(); }

  void SetObserver(ApiCallObserver* observer) { observer_.store(observer); }

  // Waits the backoff after failure number `failures` (1 for the first); false when Cancel()
  // or `stop` ended the wait. For callers with their own retry loops (ListWatcher).
  bool Backoff(int failures, StopFlag* stop = nullptr);

  const ApiServerConfig& config() const { return config_; }

 private:
  ApiClient(ApiServerConfig config, ApiClientOptions options, std::string url_base,
            TlsSettings tls);

  Result<HttpRequest> Request(const ApiCall& call, const CallDeadline& deadline);
  Result<ApiAnswer> Attempt(const ApiCall& call, const CallDeadline& deadline);
  // The options' timeout, cut to what is left before the deadline (at least 1 ms).
  std::chrono::milliseconds TimeoutOf(const CallDeadline& deadline) const;
  void Count(const ApiCall& call, int code);
  bool WaitFor(std::chrono::milliseconds delay, StopFlag* stop);

  ApiServerConfig config_;
  ApiClientOptions options_;
  std::string url_base_;  // scheme://host[:port][/path], with tls_server_name as host if set
  HttpSession session_;
  std::unique_ptr<TokenFile> token_file_;
  AuthFailureLog auth_log_;
  std::atomic<ApiCallObserver*> observer_{nullptr};
  StopFlag cancel_;
  std::mutex random_mu_;
  std::mt19937_64 random_;
};

}  // namespace gfp::adapters::apiserver
