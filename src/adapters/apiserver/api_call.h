// One request to the Kubernetes API server and its answer (SPEC §11 "API server client"), as
// ApiClient (api_client.h) sends and returns them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// What a request does, in the words of RBAC rules (a ClusterRole lists these verbs).
enum class Verb { kGet, kList, kWatch, kCreate, kUpdate, kPatch, kDelete };

// RBAC spelling: "get", "list", "watch", "create", "update", "patch", "delete".
const char* VerbName(Verb verb);

// The HTTP method a verb is sent with ("GET" for get, list and watch).
const char* HttpMethod(Verb verb);

struct ApiCall {
  Verb verb = Verb::kGet;
  std::string resource;  // "resourceclaims", "resourceslices", "nodes": for logs and metrics
  std::string path;      // "/apis/resource.k8s.io/v1/..." including any query string
  std::string body;      // JSON for create/update/patch
  // Empty: "application/json", or "application/merge-patch+json" for kPatch.
  std::string content_type;
};

// "get resourceclaims", for messages.
std::string Describe(const ApiCall& call);

struct ApiAnswer {
  int code = 0;  // the HTTP status: any answer, 404 included, is a definite answer
  std::string body;
  std::string request;  // Describe() of the call answered, for Json()'s messages

  // The body as JSON; garbage is an error naming the request, never an exception.
  Result<nlohmann::json> Json() const;
};

}  // namespace gfp::adapters::apiserver
