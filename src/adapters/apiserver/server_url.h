// URL work done by libcurl's URL API, not by hand: where requests go when the config names a
// tls_server_name, and query values escaped for a path.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::apiserver {

struct ServerRoute {
  std::string url_base;    // what request paths are appended to
  std::string connect_to;  // CURLOPT_CONNECT_TO entry, empty when not needed
};

// For an empty tls_server_name, the server URL as it is. Otherwise requests are addressed to
// tls_server_name (so SNI and certificate checks use it) and connected to the server's own host
// and port ("name:port:host:port"), which is what kubectl's tls-server-name means.
Result<ServerRoute> RouteTo(const std::string& server, const std::string& tls_server_name);

// `value` percent-encoded for a query string ("metadata.name=x" -> "metadata.name%3Dx").
std::string EscapeQueryValue(std::string_view value);

}  // namespace gfp::adapters::apiserver
