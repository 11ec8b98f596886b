#include "adapters/apiserver/server_url.h"

#include <curl/curl.h>

#include <memory>

namespace gfp::adapters::apiserver {
namespace {

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
struct TextDeleter {
  void operator()(char* text) const { curl_free(text); }
};
using Text = std::unique_ptr<char, TextDeleter>;

Result<std::string> Part(CURLU* url, CURLUPart part, const char* what, const std::string& server,
                         unsigned flags = 0) {
  char* raw = nullptr;
  const CURLUcode rc = curl_url_get(url, part, &raw, flags);
  Text text(raw);
  if (rc != CURLUE_OK) {
    return InvalidArgument("API server URL " + server + ": no " + what + " (" +
                           curl_url_strerror(rc) + ")");
  }
  return std::string(text.get());
}

}  // namespace

Result<ServerRoute> RouteTo(const std::string& server, const std::string& tls_server_name) {
  if (tls_server_name.empty()) return ServerRoute{server, ""};
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  if (!url) return Internal("libcurl could not make a URL handle");
  if (const CURLUcode rc = curl_url_set(url.get(), CURLUPART_URL, server.c_str(), 0);
      rc != CURLUE_OK) {
    return InvalidArgument("API server URL " + server + ": " + curl_url_strerror(rc));
  }
  GFP_ASSIGN_OR_RETURN(const std::string host, Part(url.get(), CURLUPART_HOST, "host", server));
  GFP_ASSIGN_OR_RETURN(const std::string port,
                       Part(url.get(), CURLUPART_PORT, "port", server, CURLU_DEFAULT_PORT));
  if (const CURLUcode rc = curl_url_set(url.get(), CURLUPART_HOST, tls_server_name.c_str(), 0);
      rc != CURLUE_OK) {
    return InvalidArgument("tls-server-name \"" + tls_server_name + "\" is not a host name (" +
                           curl_url_strerror(rc) + ")");
  }
  GFP_ASSIGN_OR_RETURN(std::string url_base, Part(url.get(), CURLUPART_URL, "URL", server));
  // The server URL carries no trailing '/', but curl's rebuilt URL always ends in a path.
  if (!url_base.empty() && url_base.back() == '/') url_base.pop_back();
  return ServerRoute{url_base, tls_server_name + ":" + port + ":" + host + ":" + port};
}

std::string EscapeQueryValue(std::string_view value) {
  Text escaped(curl_easy_escape(nullptr, value.data(), static_cast<int>(value.size())));
  return escaped ? std::string(escaped.get()) : std::string();
}

}  // namespace gfp::adapters::apiserver
