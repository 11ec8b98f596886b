// What a kubeconfig user entry gives: the one credential requests carry.
#include <utility>

#include "adapters/apiserver/config_checks.h"
#include "adapters/apiserver/kubeconfig_entry.h"
#include "adapters/apiserver/referenced_file.h"

namespace gfp::adapters::apiserver {
namespace {

constexpr const char* kGiveCredential = "give it a token, a tokenFile or a client certificate";

// Ways of authenticating this plugin does not take. Each is refused by name rather than ignored:
// ignoring it would send the requests with another identity, or none.
Status RefuseUnsupported(const EntryReader& user) {
  if (user.Has("exec")) {
    return user.Error(
        std::string("uses an exec credential plugin, which gpu-fabric-plugin does not run: ") +
        kGiveCredential);
  }
  if (user.Has("auth-provider")) {
    return user.Error(
        std::string("uses an auth-provider, which gpu-fabric-plugin does not support: ") +
        kGiveCredential);
  }
  if (user.Has("username") || user.Has("password")) {
    return user.Error(std::string("uses basic authentication (username/password), which "
                                  "gpu-fabric-plugin does not support: ") +
                      kGiveCredential);
  }
  for (const char* key : {"as", "as-uid", "as-groups", "as-user-extra"}) {
    if (user.Has(key)) {
      return user.Error(std::string("impersonates (") + key +
                        "), which gpu-fabric-plugin does not support");
    }
  }
  return Status::Ok();
}

Status ApplyClientCertificate(const EntryReader& user, std::string certificate,
                              std::optional<std::string> key, ApiServerConfig& config) {
  if (!key.has_value()) {
    return user.Error("has a client certificate but no client-key or client-key-data");
  }
  GFP_RETURN_IF_ERROR(
      CheckCertificatePem(certificate, "the client certificate").WithContext(user.what()));
  GFP_RETURN_IF_ERROR(CheckPrivateKeyPem(*key, "the client key").WithContext(user.what()));
  config.auth = AuthKind::kClientCertificate;
  config.client_certificate_pem = std::move(certificate);
  config.client_key_pem = std::move(*key);
  return Status::Ok();
}

}  // namespace

Status ApplyUser(const EntryReader& user, ApiServerConfig& config) {
  GFP_RETURN_IF_ERROR(RefuseUnsupported(user));
  GFP_ASSIGN_OR_RETURN(std::string token, user.Text("token"));
  GFP_ASSIGN_OR_RETURN(const std::string token_file, user.Text("tokenFile"));
  GFP_ASSIGN_OR_RETURN(auto certificate,
                       user.DataOrFile("client-certificate-data", "client-certificate"));
  GFP_ASSIGN_OR_RETURN(auto key, user.DataOrFile("client-key-data", "client-key"));

  const int given = !token.empty() + !token_file.empty() + certificate.has_value();
  // Two credentials: client-go would send both and the API server would pick one; which one
  // depends on its authenticator order. Refused, so the identity used is the one written.
  if (given > 1) {
    return user.Error(
        "gives more than one credential (token, tokenFile, client certificate): keep one");
  }
  if (certificate.has_value()) {
    return ApplyClientCertificate(user, std::move(*certificate), std::move(key), config);
  }
  if (key.has_value()) return user.Error("has a client key but no client certificate");
  if (!token.empty()) {
    GFP_RETURN_IF_ERROR(CheckBearerToken(token, "token").WithContext(user.what()));
    config.auth = AuthKind::kBearerToken;
    config.bearer_token = std::move(token);
    return Status::Ok();
  }
  if (!token_file.empty()) {
    config.auth = AuthKind::kTokenFile;
    config.token_file = ResolveAgainst(user.base_dir(), token_file);
    Result<std::string> read = ReadTokenFile(config.token_file);
    if (!read.ok()) return read.status().WithContext(user.what());
    return Status::Ok();
  }
  return user.Error(std::string("has no credentials: ") + kGiveCredential);
}

}  // namespace gfp::adapters::apiserver
