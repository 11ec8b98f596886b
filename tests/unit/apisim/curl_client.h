// libcurl's easy API as the tests' client of the fake API server: one request, TLS verified
// against a given CA, optional bearer token or client certificate, the body collected (or handed
// to a callback that may stop it).
#pragma once

#include <curl/curl.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gfp::apisim::testing {

struct CurlOptions {
  std::string ca_file;
  std::string token;
  std::string client_cert;
  std::string client_key;
  long timeout_ms = 5000;
  // Sees each piece of the body as it arrives; false aborts the transfer (CURLE_WRITE_ERROR).
  std::function<bool(std::string_view)> on_data;
};

struct HttpReply {
  CURLcode result = CURLE_OK;
  long code = 0;
  std::string body;
  double seconds = 0;
  nlohmann::json Json() const { return nlohmann::json::parse(body, nullptr, false); }
};

HttpReply Call(const std::string& method, const std::string& url, const std::string& body,
               const CurlOptions& options);

// A watch body's lines, each parsed (a line that is not JSON becomes a discarded value).
std::vector<nlohmann::json> WatchLines(const std::string& body);

}  // namespace gfp::apisim::testing
