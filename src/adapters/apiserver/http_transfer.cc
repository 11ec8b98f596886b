#include "adapters/apiserver/http_transfer.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace gfp::adapters::apiserver {
namespace {

using Clock = std::chrono::steady_clock;

// State the libcurl callbacks share with Perform.
struct Exchange {
  CURL* curl = nullptr;
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  Clock::time_point last_byte = Clock::now();
  bool too_big = false;
  bool idle = false;
  bool cancelled = false;
};

std::size_t OnWrite(char* data, std::size_t size, std::size_t count, void* user) {
  auto& x = *static_cast<Exchange*>(user);
  const std::size_t n = size * count;
  x.last_byte = Clock::now();
  if (x.request->on_data) {
    long code = 0;
    curl_easy_getinfo(x.curl, CURLINFO_RESPONSE_CODE, &code);
    if (!x.request->on_data(code, std::string_view(data, n))) {
      x.response->stopped = true;
      return CURL_WRITEFUNC_ERROR;
    }
    return n;
  }
  if (x.response->body.size() + n > x.request->max_body_bytes) {
    x.too_big = true;  // refused, not buffered
    return CURL_WRITEFUNC_ERROR;
  }
  x.response->body.append(data, n);
  return n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto& x = *static_cast<Exchange*>(user);
  if (x.request->cancelled && x.request->cancelled()) {
    x.cancelled = true;
    return 1;
  }
  const auto idle = x.request->idle_timeout;
  if (idle.count() > 0 && Clock::now() - x.last_byte > idle) {
    x.idle = true;
    return 1;
  }
  return 0;
}

// Copies `pem` into libcurl (CURL_BLOB_COPY), so nothing here has to outlive the call.
CURLcode SetBlob(CURL* curl, CURLoption option, const std::string& pem) {
  curl_blob blob{const_cast<char*>(pem.data()), pem.size(), CURL_BLOB_COPY};
  return curl_easy_setopt(curl, option, &blob);
}

// Peer and host verification are always on; the CA is the config's and nothing else.
CURLcode SetTls(CURL* curl, const TlsSettings& tls, curl_slist** connect_to) {
  CURLcode rc = CURLE_OK;
  auto set = [&rc](CURLcode r) { rc = rc == CURLE_OK ? r : rc; };
  set(curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L));
  set(curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L));
  set(curl_easy_setopt(curl, CURLOPT_CAINFO, nullptr));
  set(curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr));
  set(SetBlob(curl, CURLOPT_CAINFO_BLOB, tls.ca_pem));
  if (!tls.client_certificate_pem.empty()) {
    set(SetBlob(curl, CURLOPT_SSLCERT_BLOB, tls.client_certificate_pem));
    set(curl_easy_setopt(curl, CURLOPT_SSLCERTTYPE, "PEM"));
    set(SetBlob(curl, CURLOPT_SSLKEY_BLOB, tls.client_key_pem));
    set(curl_easy_setopt(curl, CURLOPT_SSLKEYTYPE, "PEM"));
  }
  if (!tls.connect_to.empty()) {
    *connect_to = curl_slist_append(nullptr, tls.connect_to.c_str());
    set(curl_easy_setopt(curl, CURLOPT_CONNECT_TO, *connect_to));
  }
  return rc;
}

CURLcode SetRequest(CURL* curl, const HttpRequest& request, curl_slist* headers, Exchange* x,
                    char* error_buffer) {
  CURLcode rc = CURLE_OK;
  auto set = [&rc](CURLcode r) { rc = rc == CURLE_OK ? r : rc; };
  set(curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str()));
  set(curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "https"));
  set(curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L));
  set(curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L));
  set(curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer));
  set(curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, request.method));
  if (!request.body.empty() || std::string_view(request.method) != "GET") {
    set(curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size())));
    set(curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str()));
  }
  if (std::string_view(request.method) == "GET") set(curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L));
  set(curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers));
  set(curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(request.connect_timeout.count())));
  set(curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.total_timeout.count())));
  set(curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnWrite));
  set(curl_easy_setopt(curl, CURLOPT_WRITEDATA, x));
  set(curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L));
  set(curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress));
  set(curl_easy_setopt(curl, CURLOPT_XFERINFODATA, x));
  return rc;
}

void Classify(CURLcode rc, const Exchange& x, const char* error_buffer, HttpResponse* out) {
  if (rc == CURLE_OK) return;
  if (out->stopped) return;  // the reader had what it wanted
  out->error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(rc);
  if (x.too_big) {
    out->failure = HttpFailure::kTooBig;
  } else if (x.cancelled) {
    out->failure = HttpFailure::kCancelled;
  } else if (x.idle) {
    out->failure = HttpFailure::kIdle;
  } else {
    out->failure = HttpFailure::kNoAnswer;
    out->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
  }
}

}  // namespace

HttpSession::HttpSession(TlsSettings tls) : tls_(std::move(tls)) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpSession::~HttpSession() {
  for (void* handle : idle_) curl_easy_cleanup(static_cast<CURL*>(handle));
}

void* HttpSession::TakeHandle() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      void* handle = idle_.back();
      idle_.pop_back();
      return handle;
    }
  }
  return curl_easy_init();
}

void HttpSession::GiveBack(void* handle) {
  // curl_easy_reset clears the options and keeps the handle's open connections for reuse.
  curl_easy_reset(static_cast<CURL*>(handle));
  std::lock_guard lock(mu_);
  idle_.push_back(handle);
}

Result<HttpResponse> HttpSession::Perform(const HttpRequest& request) {
  CURL* curl = static_cast<CURL*>(TakeHandle());
  if (curl == nullptr) return Internal("libcurl could not make a handle");
  HttpResponse response;
  Exchange x{curl, &request, &response};
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  curl_slist* connect_to = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};
  CURLcode rc = SetTls(curl, tls_, &connect_to);
  if (rc == CURLE_OK) rc = SetRequest(curl, request, headers, &x, error_buffer);
  Status setup;
  if (rc != CURLE_OK) {
    setup = Internal(std::string("setting up libcurl: ") + curl_easy_strerror(rc));
  } else {
    rc = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.code);
    Classify(rc, x, error_buffer, &response);
  }
  // Options point into these lists: reset the handle before freeing them.
  GiveBack(curl);
  curl_slist_free_all(headers);
  curl_slist_free_all(connect_to);
  if (!setup.ok()) return setup;
  return response;
}

}  // namespace gfp::adapters::apiserver
