// ApiClient::Watch: one watch stream, framed into events under the size cap, ended by the
// consumer, Cancel(), a StopFlag or an idle connection.
#include "adapters/apiserver/api_client.h"

namespace gfp::adapters::apiserver {
namespace {

// The Status object of a watch's HTTP error answer, or one made up from the code when the
// body is not one (an answer from a proxy, garbage).
nlohmann::json ErrorStatus(long code, const std::string& body) {
  nlohmann::json status = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (status.is_object() && status.value("kind", "") == "Status") {
    if (!status.contains("code")) status["code"] = code;
    return status;
  }
  return {{"kind", "Status"}, {"status", "Failure"}, {"code", code}};
}

}  // namespace

Status ApiClient::Watch(const ApiCall& call, const std::function<bool(const WatchEvent&)>& on_event,
                        StopFlag* stop) {
  const std::string what = "API server " + config_.server + ", " + Describe(call);
  if (cancel_.stopped() || (stop != nullptr && stop->stopped())) return Status::Ok();
  GFP_ASSIGN_OR_RETURN(HttpRequest request, Request(call, std::nullopt));
  request.total_timeout = std::chrono::milliseconds(0);
  request.idle_timeout = options_.watch_idle_timeout;
  request.cancelled = [this, stop] {
    return cancel_.stopped() || (stop != nullptr && stop->stopped());
  };
  WatchLineFramer framer(options_.max_watch_event_bytes);
  Status stream_error;
  bool consumer_stopped = false;
  std::string error_body;
  auto on_line = [&](std::string_view line) {
    auto event = ParseWatchEvent(line);
    if (!event.ok()) {
      stream_error = event.status();
      return false;
    }
    consumer_stopped = !on_event(*event);
    return !consumer_stopped;
  };
  request.on_data = [&](long code, std::string_view bytes) {
    if (code != 200) {  // an error answer's Status object, kept under the body cap
      if (error_body.size() + bytes.size() > options_.max_body_bytes) return false;
      error_body.append(bytes);
      return true;
    }
    auto fed = framer.Feed(bytes, on_line);
    if (!fed.ok()) stream_error = fed.status();
    return fed.ok() && *fed;
  };
  auto response = session_.Perform(request);
  if (!response.ok()) {
    Count(call, 0);
    return response.status().WithContext(what);
  }
  const int code = response->failure == HttpFailure::kNoAnswer && response->code == 0
                       ? 0
                       : static_cast<int>(response->code);
  Count(call, code);
  auth_log_.Note(call.verb, call.resource, code);
  if (!stream_error.ok()) return stream_error.WithContext(what);
  if (consumer_stopped) return Status::Ok();
  switch (response->failure) {
    case HttpFailure::kCancelled:
      return Status::Ok();
    case HttpFailure::kIdle:
      return DeadlineExceeded(what + ": no byte for " +
                              std::to_string(options_.watch_idle_timeout.count()) +
                              " ms; watch ended");
    case HttpFailure::kNone:
    case HttpFailure::kTooBig:
      break;
    case HttpFailure::kNoAnswer:
      if (code == 200) return Status::Ok();  // a stream cut mid-way: resume from the last event
      if (code == 0) return Unavailable(what + ": no answer: " + response->error);
      break;
  }
  if (code == 200) return Status::Ok();
  on_event(WatchEvent{"ERROR", ErrorStatus(code, error_body)});
  return FailedPrecondition(what + ": answered HTTP " + std::to_string(code));
}

}  // namespace gfp::adapters::apiserver
