#include "adapters/apiserver/api_client.h"

#include <algorithm>

#include "adapters/apiserver/server_url.h"

namespace gfp::adapters::apiserver {
namespace {

constexpr std::chrono::milliseconds kWaitSlice{20};

bool Retryable(int code) { return code == 429 || code >= 500; }

std::string ContentType(const ApiCall& call) {
  if (!call.content_type.empty()) return call.content_type;
  return call.verb == Verb::kPatch ? "application/merge-patch+json" : "application/json";
}

}  // namespace

void StopFlag::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_.store(true);
  }
  cv_.notify_all();
}

bool StopFlag::SleepFor(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, delay, [this] { return stopped_.load(); });
}

Result<std::unique_ptr<ApiClient>> ApiClient::Create(ApiServerConfig config,
                                                     ApiClientOptions options) {
  if (config.ca_pem.empty()) {
    return InvalidArgument("API server " + config.server + " (from " + config.source +
                           "): no CA certificate to check it with");
  }
  if (options.attempts < 1) return InvalidArgument("API client: attempts must be at least 1");
  GFP_ASSIGN_OR_RETURN(ServerRoute route, RouteTo(config.server, config.tls_server_name));
  TlsSettings tls{config.ca_pem, "", "", route.connect_to};
  if (config.auth == AuthKind::kClientCertificate) {
    tls.client_certificate_pem = config.client_certificate_pem;
    tls.client_key_pem = config.client_key_pem;
  }
  return std::unique_ptr<ApiClient>(
      new ApiClient(std::move(config), std::move(options), route.url_base, std::move(tls)));
}

ApiClient::ApiClient(ApiServerConfig config, ApiClientOptions options, std::string url_base,
                     TlsSettings tls)
    : config_(std::move(config)),
      options_(std::move(options)),
      url_base_(std::move(url_base)),
      session_(std::move(tls)),
      auth_log_(config_.server, config_.source),
      random_(std::random_device{}()) {
  if (config_.auth == AuthKind::kTokenFile) {
    token_file_ = std::make_unique<TokenFile>(config_.token_file);
  }
}

void ApiClient::Cancel() { cancel_.Stop(); }

Result<HttpRequest> ApiClient::Request(const ApiCall& call, const CallDeadline& deadline) {
  HttpRequest request;
  request.method = HttpMethod(call.verb);
  request.url = url_base_ + call.path;
  request.headers = {"Accept: application/json", "User-Agent: gpu-fabric-plugin",
                     "Expect:"};  // no 100-continue round trip before a body
  if (!call.body.empty()) request.headers.push_back("Content-Type: " + ContentType(call));
  request.body = call.body;
  request.connect_timeout = TimeoutOf(deadline);
  std::string token = config_.bearer_token;
  if (token_file_) {
    auto read = token_file_->Token();
    if (!read.ok()) return read.status().WithContext(Describe(call) + ": no bearer token");
    token = std::move(*read);
  }
  if (config_.auth != AuthKind::kClientCertificate) {
    request.headers.push_back("Authorization: Bearer " + token);
  }
  return request;
}

void ApiClient::Count(const ApiCall& call, int code) {
  if (ApiCallObserver* observer = observer_.load())
    observer->OnApiCall(call.verb, call.resource, code);
}

Result<ApiAnswer> ApiClient::Attempt(const ApiCall& call, const CallDeadline& deadline) {
  GFP_ASSIGN_OR_RETURN(HttpRequest request, Request(call, deadline));
  request.total_timeout = TimeoutOf(deadline);
  request.max_body_bytes = options_.max_body_bytes;
  auto response = session_.Perform(request);
  if (!response.ok()) {
    Count(call, 0);
    return response.status().WithContext(Describe(call));
  }
  const std::string who = "API server " + config_.server;
  switch (response->failure) {
    case HttpFailure::kNone: {
      const int code = static_cast<int>(response->code);
      Count(call, code);
      auth_log_.Note(call.verb, call.resource, code);
      return ApiAnswer{code, std::move(response->body), Describe(call)};
    }
    case HttpFailure::kTooBig:
      Count(call, 0);
      return ResourceExhausted(who + ": the answer to " + Describe(call) + " is bigger than " +
                               std::to_string(options_.max_body_bytes) + " bytes; refused");
    default:
      Count(call, 0);
      return Unavailable(who + " did not answer " + Describe(call) + ": " + response->error +
                         (response->timed_out
                              ? " (timeout " + std::to_string(TimeoutOf(deadline).count()) + " ms)"
                              : ""));
  }
}

std::chrono::milliseconds ApiClient::TimeoutOf(const CallDeadline& deadline) const {
  if (!deadline) return options_.timeout;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *deadline - std::chrono::steady_clock::now());
  return std::clamp(left, std::chrono::milliseconds(1), options_.timeout);
}

Result<ApiAnswer> ApiClient::Call(const ApiCall& call, CallDeadline deadline) {
  // After Cancel (shutdown) nothing more is sent: a pass over many claims must not spend one
  // timeout per claim on a server that does not answer.
  if (cancel_.stopped()) {
    return Unavailable("API server " + config_.server + ": " + Describe(call) +
                       " not sent: the client is shutting down");
  }
  for (int attempt = 1;; ++attempt) {
    if (deadline && std::chrono::steady_clock::now() >= *deadline) {
      return Unavailable(
          "API server " + config_.server + ": " + Describe(call) +
          " not sent: its caller's deadline passed" +
          (attempt > 1 ? " after " + std::to_string(attempt - 1) + " attempts" : std::string()));
    }
    Result<ApiAnswer> answer = Attempt(call, deadline);
    const bool retry =
        answer.ok() ? Retryable(answer->code) : answer.status().code() == ErrorCode::kUnavailable;
    if (!retry || attempt >= options_.attempts) {
      if (answer.ok() || attempt == 1 || !retry) return answer;
      return answer.status().WithContext("after " + std::to_string(attempt) + " attempts");
    }
    if (!Backoff(attempt)) {
      if (answer.ok()) return answer;
      return answer.status().WithContext("cancelled while waiting to retry");
    }
  }
}

bool ApiClient::Backoff(int failures, StopFlag* stop) {
  double unit = 0;
  if (options_.unit_random) {
    unit = options_.unit_random();
  } else {
    std::lock_guard lock(random_mu_);
    unit = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
  }
  const auto delay = BackoffDelay({options_.backoff_base, options_.backoff_cap}, failures, unit);
  if (cancel_.stopped() || (stop != nullptr && stop->stopped())) return false;
  if (options_.sleep) {
    options_.sleep(delay);
    return !cancel_.stopped() && (stop == nullptr || !stop->stopped());
  }
  return WaitFor(delay, stop);
}

bool ApiClient::WaitFor(std::chrono::milliseconds delay, StopFlag* stop) {
  if (stop == nullptr) return cancel_.SleepFor(delay);
  // Two flags: wait on the client's in short slices and look at the watcher's between them.
  while (delay.count() > 0) {
    const auto slice = std::min(delay, kWaitSlice);
    if (stop->stopped() || !cancel_.SleepFor(slice)) return false;
    delay -= slice;
  }
  return !stop->stopped();
}

}  // namespace gfp::adapters::apiserver
