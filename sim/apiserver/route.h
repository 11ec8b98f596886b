// A request's path and method as Kubernetes RBAC names them: verb, resource, namespace, name,
// and the decoded query parameters.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gfp::apisim {

struct Route {
  std::string verb;      // get, list, watch, create, update, patch, delete
  std::string resource;  // nodes, resourceclaims, resourceslices
  std::string ns;        // resourceclaims only
  std::string name;      // empty for list, watch, create
  std::map<std::string, std::string> query;
  std::string Query(const std::string& key) const;
};

// Null when the path names nothing this server has (404) or the method does not apply (405
// is told apart by `method_allowed`).
std::optional<Route> ParseRoute(const std::string& method, const std::string& path,
                                const std::string& query_string, bool& method_allowed);

}  // namespace gfp::apisim
