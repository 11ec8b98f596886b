// A fake Kubernetes API server over real HTTPS (civetweb + OpenSSL) for DRA mode's tests, the
// simulated worlds and the demo: Nodes and ResourceClaims to read, ResourceSlices to list, watch,
// create, update and delete, with resourceVersions, Status errors, bearer-token or client
// certificate authentication, per-(verb, resource) 403 switches and injected faults. Connections
// are kept alive, as kube-apiserver keeps them; an injected fault's answer closes its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/apiserver/faults.h"
#include "sim/apiserver/object_store.h"
#include "sim/apiserver/request_log.h"
#include "sim/apiserver/route.h"
#include "sim/apiserver/test_pki.h"

struct mg_context;
struct mg_connection;

namespace gfp::apisim {

class FakeApiServer {
 public:
  struct Options {
    TestPki pki;                       // the server's certificate and the CA for clients
    std::string token;                 // accepted bearer token ("": none unless token_file)
    std::filesystem::path token_file;  // also accepted: its contents, re-read per request
    bool accept_client_cert = false;   // a client certificate signed by pki's CA authenticates
    int threads = 32;                  // each open watch holds one
  };

  // Listens on 127.0.0.1 on an ephemeral port.
  static Result<std::unique_ptr<FakeApiServer>> Start(Options options);
  ~FakeApiServer();  // prompt even with open watches and slow answers
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  std::string url() const;  // "https://127.0.0.1:PORT"
  int port() const { return port_; }

  // World controls (thread-safe).
  std::string PutNode(const std::string& name) { return store_.PutNode(name); }
  Result<nlohmann::json> PutClaim(nlohmann::json claim) {
    return store_.PutClaim(std::move(claim));
  }
  bool DeleteClaim(const std::string& ns, const std::string& name) {
    return store_.DeleteClaim(ns, name);
  }
  std::vector<nlohmann::json> Slices() const { return store_.Slices(); }
  int WipeSlices(const std::string& node) { return store_.WipeSlices(node); }
  Status ModifySlice(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    return store_.ModifySlice(name, edit);
  }
  void CompactHistory() { store_.CompactHistory(); }
  std::uint64_t ResourceVersion() const { return store_.CurrentResourceVersion(); }
  void SetToken(const std::string& token);
  // 403 Forbidden for that verb on that resource ("*" matches any) while `on`.
  void SetForbidden(const std::string& verb, const std::string& resource, bool on);
  void AddFault(Fault fault) { faults_.Add(std::move(fault)); }
  void ClearFaults() { faults_.Clear(); }
  // Ends every open watch stream at once, without the closing chunk (clients resume).
  void CloseWatches() { ++watch_generation_; }

  int CallCount(const std::string& verb, const std::string& resource) const {
    return log_.Count(verb, resource);
  }
  std::vector<RequestRecord> Requests() const { return log_.Records(); }
  void ClearRequests() { log_.Clear(); }

 private:
  explicit FakeApiServer(Options options) : options_(std::move(options)) {}
  static int Handle(mg_connection* connection, void* self);
  int Serve(mg_connection* connection, const Route& route);
  bool Authenticated(mg_connection* connection) const;
  bool Forbidden(const std::string& verb, const std::string& resource) const;

  Options options_;
  ObjectStore store_;
  FaultTable faults_;
  RequestLog log_;
  mutable std::mutex auth_mutex_;
  std::string token_;
  std::set<std::pair<std::string, std::string>> forbidden_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> watch_generation_{0};
  mg_context* context_ = nullptr;
  int port_ = 0;
};

}  // namespace gfp::apisim
