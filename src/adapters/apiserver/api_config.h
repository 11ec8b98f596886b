// Where the Kubernetes API server is and how to authenticate to it (SPEC §11 "API server
// client"), read from a kubeconfig file (kubeconfig.h) or the pod's service account
// (in_cluster.h). The HTTPS client takes it as it is: everything here has been checked.
#pragma once

#include <filesystem>
#include <string>

namespace gfp::adapters::apiserver {

// How requests prove who they are. Exactly one way per config: a kubeconfig naming two is
// refused rather than guessed at (kubectl and the API server disagree on which one wins).
enum class AuthKind {
  kBearerToken,        // bearer_token, given inline
  kTokenFile,          // token_file, re-read when it changes (projected tokens rotate)
  kClientCertificate,  // client_certificate_pem + client_key_pem
};

// "a bearer token", "a token file", "a client certificate": for messages.
const char* AuthKindName(AuthKind kind);

struct ApiServerConfig {
  std::string server;  // "https://host[:port][/path]", never with a trailing '/'
  std::string ca_pem;  // the CA bundle the server's certificate must chain to
  AuthKind auth = AuthKind::kTokenFile;
  std::string bearer_token;            // kBearerToken
  std::filesystem::path token_file;    // kTokenFile; read once when loaded, to check it
  std::string client_certificate_pem;  // kClientCertificate
  std::string client_key_pem;          // kClientCertificate
  std::string tls_server_name;         // empty: the server URL's host
  // Where this came from, for messages: "kubeconfig /x (context \"c\")" or
  // "in-cluster service account /var/run/secrets/kubernetes.io/serviceaccount".
  std::string source;
};

}  // namespace gfp::adapters::apiserver
