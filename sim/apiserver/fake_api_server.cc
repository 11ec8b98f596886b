#include "sim/apiserver/fake_api_server.h"

#include <civetweb.h>
#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include "sim/apiserver/civetweb_stop.h"

namespace gfp::apisim {
namespace {

// What civetweb logged while starting on this thread: its start error alone says little.
thread_local std::string t_start_log;

int KeepLog(const mg_connection*, const char* message) {
  if (t_start_log.size() < 1024)
    t_start_log += std::string(t_start_log.empty() ? "" : "; ") + message;
  return 1;  // civetweb prints nothing itself
}

// The OpenSSL 3 shim: beside the running program when it is installed there (the packaged demo
// program, in <prefix>/lib/gpu-fabric-plugin/), else where the build put it.
std::string ShimPath() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const auto beside = self.parent_path() / GFP_APISIM_OPENSSL3_SHIM_NAME;
    if (std::filesystem::is_regular_file(beside, error)) return beside.string();
  }
  return GFP_APISIM_OPENSSL3_SHIM;
}

// Loads the OpenSSL 3 shim (openssl3_shim.cc), then OpenSSL into civetweb, once per process.
Status InitCivetwebOnce() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    const std::string shim = ShimPath();
    if (::dlopen(shim.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      const char* why = ::dlerror();
      error = "fake API server: cannot load " + shim + ": " + (why ? why : "unknown error");
      return;
    }
    if ((mg_init_library(MG_FEATURES_SSL) & MG_FEATURES_SSL) == 0) {
      error = "fake API server: civetweb could not load OpenSSL (libssl.so, libcrypto.so)";
    }
  });
  return error.empty() ? Status::Ok() : Unavailable(error);
}

}  // namespace

Result<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(Options options) {
  if (!(mg_check_feature(MG_FEATURES_SSL) & MG_FEATURES_SSL)) {
    return Unavailable("fake API server: this civetweb was built without TLS");
  }
  GFP_RETURN_IF_ERROR(InitCivetwebOnce());
  std::unique_ptr<FakeApiServer> server(new FakeApiServer(std::move(options)));
  server->token_ = server->options_.token;
  const std::string threads = std::to_string(server->options_.threads);
  const std::string bundle = server->options_.pki.server_bundle_file.string();
  const std::string ca = server->options_.pki.ca_file.string();
  // Kept alive as kube-apiserver keeps them; TCP_NODELAY because headers and body leave in two
  // writes, and a kept-alive answer would otherwise wait on the client's delayed ACK (40 ms).
  std::vector<const char*> civet = {"listening_ports",      "127.0.0.1:0s",   //
                                    "num_threads",          threads.c_str(),  //
                                    "ssl_certificate",      bundle.c_str(),   //
                                    "ssl_protocol_version", "4",              // TLS 1.2 and later
                                    "request_timeout_ms",   "10000",          //
                                    "enable_keep_alive",    "yes",            //
                                    "tcp_nodelay",          "1"};
  if (server->options_.accept_client_cert) {
    // "optional": a certificate is asked for and checked against the CA, but not required.
    civet.insert(civet.end(), {"ssl_verify_peer", "optional", "ssl_ca_file", ca.c_str()});
  }
  civet.push_back(nullptr);
  mg_callbacks callbacks{};
  callbacks.log_message = KeepLog;
  mg_init_data init{&callbacks, server.get(), civet.data()};
  char error_text[256] = "";
  mg_error_data error{nullptr, error_text, sizeof error_text};
  t_start_log.clear();
  server->context_ = mg_start2(&init, &error);
  if (!server->context_) {
    return Unavailable("fake API server: cannot listen on 127.0.0.1 over TLS: " +
                       (t_start_log.empty() ? std::string(error_text) : t_start_log));
  }
  mg_set_request_handler(server->context_, "/", &FakeApiServer::Handle, server.get());
  mg_server_port bound[2]{};
  if (mg_get_server_ports(server->context_, 2, bound) >= 1) server->port_ = bound[0].port;
  return server;
}

FakeApiServer::~FakeApiServer() {
  // Every handler loop checks stopping_ at least every 50 ms, so mg_stop's join is quick.
  stopping_ = true;
  if (context_) StopPromptly(context_, port_);
}

std::string FakeApiServer::url() const { return "https://127.0.0.1:" + std::to_string(port_); }

void FakeApiServer::SetToken(const std::string& token) {
  std::lock_guard lock(auth_mutex_);
  token_ = token;
}

void FakeApiServer::SetForbidden(const std::string& verb, const std::string& resource, bool on) {
  std::lock_guard lock(auth_mutex_);
  if (on) {
    forbidden_.emplace(verb, resource);
  } else {
    forbidden_.erase({verb, resource});
  }
}

}  // namespace gfp::apisim
