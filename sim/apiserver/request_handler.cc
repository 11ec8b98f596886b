// FakeApiServer's request path: route, faults, authentication, authorization, then the object
// store, each answer logged.
#include <civetweb.h>

#include <fstream>
#include <sstream>

#include "sim/apiserver/api_status.h"
#include "sim/apiserver/fake_api_server.h"
#include "sim/apiserver/fault_answers.h"
#include "sim/apiserver/http_io.h"
#include "sim/apiserver/watch_stream.h"

namespace gfp::apisim {
namespace {

using nlohmann::json;

// kube-apiserver's limit on a request body.
constexpr std::size_t kMaxBodyBytes = 3 * 1024 * 1024;

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string ReadToken(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return Trimmed(text.str());
}

// The request body as JSON, or the 400/413 answer to give instead.
std::optional<json> BodyJson(mg_connection* connection, Answer& refusal) {
  auto body = ReadBody(connection, kMaxBodyBytes);
  if (!body.ok()) {
    refusal = {413, StatusObject(413, body.status().message())};
    return std::nullopt;
  }
  json parsed = json::parse(*body, nullptr, false);
  if (parsed.is_discarded()) {
    refusal = {400, StatusObject(400, "the request body is not JSON")};
    return std::nullopt;
  }
  return parsed;
}

// A DELETE's DeleteOptions, if it sent any: null JSON for none.
std::optional<json> DeleteOptionsJson(mg_connection* connection, Answer& refusal) {
  auto body = ReadBody(connection, kMaxBodyBytes);
  if (body.ok() && Trimmed(*body).empty()) return json();
  if (!body.ok()) {
    refusal = {413, StatusObject(413, body.status().message())};
    return std::nullopt;
  }
  json parsed = json::parse(*body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    refusal = {400, StatusObject(400, "the request body is not a DeleteOptions object")};
    return std::nullopt;
  }
  return parsed;
}

Answer SliceAnswer(mg_connection* connection, ObjectStore& store, const Route& route) {
  if (route.verb == "get") return store.GetSlice(route.name);
  if (route.verb == "delete") {
    Answer refusal;
    auto options = DeleteOptionsJson(connection, refusal);
    if (!options) return refusal;
    return store.DeleteSlice(route.name, options->is_object()
                                             ? options->value("preconditions", json::object())
                                             : json::object());
  }
  if (route.verb == "list") {
    const auto selector = FieldSelector::Parse(route.Query("fieldSelector"));
    if (!selector.ok()) return {400, StatusObject(400, selector.status().message())};
    return store.ListSlices(*selector);
  }
  if (route.verb == "patch") {
    return {405, StatusObject(405, "this fake API server does not implement patch")};
  }
  Answer refusal;
  auto body = BodyJson(connection, refusal);
  if (!body) return refusal;
  if (route.verb == "create") return store.CreateSlice(std::move(*body));
  return store.UpdateSlice(route.name, std::move(*body));
}

}  // namespace

bool FakeApiServer::Authenticated(mg_connection* connection) const {
  const mg_request_info* info = mg_get_request_info(connection);
  if (options_.accept_client_cert && info->client_cert != nullptr) return true;
  const char* header = mg_get_header(connection, "Authorization");
  const std::string prefix = "Bearer ";
  if (!header || std::string(header).rfind(prefix, 0) != 0) return false;
  const std::string given = Trimmed(std::string(header).substr(prefix.size()));
  if (given.empty()) return false;
  {
    std::lock_guard lock(auth_mutex_);
    if (!token_.empty() && given == token_) return true;
  }
  return !options_.token_file.empty() && given == ReadToken(options_.token_file);
}

bool FakeApiServer::Forbidden(const std::string& verb, const std::string& resource) const {
  std::lock_guard lock(auth_mutex_);
  for (const auto& [v, r] : forbidden_) {
    if ((v == "*" || v == verb) && (r == "*" || r == resource)) return true;
  }
  return false;
}

int FakeApiServer::Serve(mg_connection* connection, const Route& route) {
  const std::uint64_t generation = watch_generation_;
  const StopCheck stop = [this] { return stopping_.load(); };
  Fault fault;
  bool faulted = faults_.Take(route.verb, route.resource, fault);
  if (faulted && fault.kind == FaultKind::kDelay) {
    if (!SleepUnless(fault.delay, stop)) return 0;
    faulted = false;
  }
  const bool stream_fault =
      faulted && (fault.kind == FaultKind::kHugeEvent || fault.kind == FaultKind::kEndlessEvent);
  if (faulted && !stream_fault) {
    return AnswerFault(connection, fault, route.verb, route.resource, stop);
  }
  if (!Authenticated(connection)) {
    SendJson(connection, 401, StatusObject(401, "Unauthorized"));
    return 401;
  }
  if (Forbidden(route.verb, route.resource)) {
    const std::string group = route.resource == "nodes" ? "" : "resource.k8s.io";
    SendJson(connection, 403,
             StatusObject(403,
                          "forbidden: User cannot " + route.verb + " resource \"" + route.resource +
                              "\" in API group \"" + group + "\"",
                          route.name, route.resource));
    return 403;
  }
  if (route.verb == "watch") {
    const StopCheck stream_stop = [this, generation] {
      return stopping_.load() || watch_generation_.load() != generation;
    };
    return ServeWatch(connection, store_, route, stream_fault ? &fault : nullptr, stream_stop);
  }
  Answer answer;
  if (route.resource == "nodes") {
    answer = store_.GetNode(route.name);
  } else if (route.resource == "resourceclaims") {
    answer = store_.GetClaim(route.ns, route.name);
  } else {
    answer = SliceAnswer(connection, store_, route);
  }
  SendJson(connection, answer.code, answer.body);
  return answer.code;
}

int FakeApiServer::Handle(mg_connection* connection, void* self) {
  auto& server = *static_cast<FakeApiServer*>(self);
  const mg_request_info* info = mg_get_request_info(connection);
  const std::string path = info->local_uri ? info->local_uri : "";
  const std::string query = info->query_string ? info->query_string : "";
  const std::string full = query.empty() ? path : path + "?" + query;
  bool method_allowed = true;
  const auto route = ParseRoute(info->request_method, path, query, method_allowed);
  if (!route) {
    const int code = method_allowed ? 404 : 405;
    server.log_.Finish(server.log_.Begin({"", "", full, 0, info->remote_port}), code);
    SendJson(connection, code,
             StatusObject(code, method_allowed
                                    ? "the server could not find the requested resource"
                                    : "the server does not allow this method on the requested "
                                      "resource"));
    return code;
  }
  const std::uint64_t logged =
      server.log_.Begin({route->verb, route->resource, full, 0, info->remote_port});
  const int code = server.Serve(connection, *route);
  server.log_.Finish(logged, code);
  return code > 0 ? code : 1;  // 1: handled (a drop wrote nothing; civetweb closes)
}

}  // namespace gfp::apisim
