#include "unit/apisim/curl_client.h"

#include <chrono>
#include <sstream>

namespace gfp::apisim::testing {
namespace {

struct Sink {
  const CurlOptions* options;
  std::string* body;
};

size_t Write(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const std::string_view piece(data, size * count);
  if (sink->options->on_data && !sink->options->on_data(piece)) return 0;
  sink->body->append(piece);
  return size * count;
}

}  // namespace

HttpReply Call(const std::string& method, const std::string& url, const std::string& body,
               const CurlOptions& options) {
  HttpReply reply;
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  headers = curl_slist_append(headers, "Content-Type: application/json");
  const std::string auth = "Authorization: Bearer " + options.token;
  if (!options.token.empty()) headers = curl_slist_append(headers, auth.c_str());
  Sink sink{&options, &reply.body};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, options.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  if (!options.client_cert.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, options.client_cert.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, options.client_key.c_str());
  }
  if (method == "POST" || method == "PUT") {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  const auto start = std::chrono::steady_clock::now();
  reply.result = curl_easy_perform(curl);
  reply.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return reply;
}

std::vector<nlohmann::json> WatchLines(const std::string& body) {
  std::vector<nlohmann::json> lines;
  std::stringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return lines;
}

}  // namespace gfp::apisim::testing
