#include "sim/apiserver/route.h"

#include <civetweb.h>

#include <sstream>
#include <vector>

namespace gfp::apisim {
namespace {

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  std::string part;
  while (std::getline(in, part, '/')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string Decode(const std::string& text) {
  std::string out(text.size() + 1, '\0');
  const int n = mg_url_decode(text.c_str(), static_cast<int>(text.size()), out.data(),
                              static_cast<int>(out.size()), 1);
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return out;
}

std::map<std::string, std::string> ParseQuery(const std::string& query_string) {
  std::map<std::string, std::string> query;
  std::stringstream in(query_string);
  std::string pair;
  while (std::getline(in, pair, '&')) {
    const auto eq = pair.find('=');
    if (eq == std::string::npos) {
      query[Decode(pair)] = "";
    } else {
      query[Decode(pair.substr(0, eq))] = Decode(pair.substr(eq + 1));
    }
  }
  return query;
}

// The verb for `method` on a collection (name empty) or one object.
std::string VerbOf(const std::string& method, bool named, bool watch) {
  if (method == "GET") return named ? "get" : (watch ? "watch" : "list");
  if (method == "POST" && !named) return "create";
  if (method == "PUT" && named) return "update";
  if (method == "PATCH" && named) return "patch";
  if (method == "DELETE" && named) return "delete";
  return "";
}

}  // namespace

std::string Route::Query(const std::string& key) const {
  const auto it = query.find(key);
  return it == query.end() ? "" : it->second;
}

std::optional<Route> ParseRoute(const std::string& method, const std::string& path,
                                const std::string& query_string, bool& method_allowed) {
  method_allowed = true;
  Route route;
  route.query = ParseQuery(query_string);
  const std::vector<std::string> s = Segments(path);
  const bool watch = route.Query("watch") == "true" || route.Query("watch") == "1";
  if (s.size() == 4 && s[0] == "api" && s[1] == "v1" && s[2] == "nodes") {
    route.resource = "nodes";
    route.name = s[3];
  } else if (s.size() == 7 && s[0] == "apis" && s[1] == "resource.k8s.io" && s[2] == "v1" &&
             s[3] == "namespaces" && s[5] == "resourceclaims") {
    route.resource = "resourceclaims";
    route.ns = s[4];
    route.name = s[6];
  } else if ((s.size() == 4 || s.size() == 5) && s[0] == "apis" && s[1] == "resource.k8s.io" &&
             s[2] == "v1" && s[3] == "resourceslices") {
    route.resource = "resourceslices";
    if (s.size() == 5) route.name = s[4];
  } else {
    return std::nullopt;
  }
  route.verb = VerbOf(method, !route.name.empty(), watch);
  // Nodes and claims are read-only here: the plugin only reads them.
  const bool read_only = route.resource != "resourceslices";
  if (route.verb.empty() || (read_only && route.verb != "get")) {
    method_allowed = false;
    return std::nullopt;
  }
  return route;
}

}  // namespace gfp::apisim
