#include "sim/apiserver/api_status.h"

namespace gfp::apisim {
namespace {

std::string GroupOf(const std::string& resource) {
  return resource == "nodes" ? "" : "resource.k8s.io";
}

}  // namespace

const char* ReasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
  }
  return "InternalError";
}

const char* HttpReason(int code) {
  switch (code) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Request Entity Too Large";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 503:
      return "Service Unavailable";
  }
  return "Internal Server Error";
}

nlohmann::json StatusObject(int code, const std::string& message, const std::string& name,
                            const std::string& resource) {
  nlohmann::json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", ReasonFor(code)},
      {"code", code}};
  if (!name.empty()) {
    status["details"] = {{"name", name}, {"group", GroupOf(resource)}, {"kind", resource}};
  }
  return status;
}

nlohmann::json NotFoundStatus(const std::string& resource, const std::string& name) {
  const std::string group = GroupOf(resource);
  const std::string qualified = group.empty() ? resource : resource + "." + group;
  return StatusObject(404, qualified + " \"" + name + "\" not found", name, resource);
}

}  // namespace gfp::apisim
