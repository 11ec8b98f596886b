// Checks of the values an ApiServerConfig holds, shared by the kubeconfig and in-cluster
// loaders. Each error is a phrase naming the field ("server \"http://x\" is not https: …"); the
// caller puts the file and entry before it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// An https:// URL with a host, no user info, query or fragment, nothing a header or log line
// could be forged with. Returns it without trailing '/' (paths are appended to it).
Result<std::string> CheckServerUrl(std::string_view url);

// A bearer token goes into an HTTP header: not empty, visible ASCII only (a newline would add
// headers of the file writer's choosing). `what` names it: "token", "token file /x".
Status CheckBearerToken(std::string_view token, const std::string& what);

// PEM text as libcurl will take it: at least one certificate / one private key. Only the armour
// is looked at; OpenSSL judges the contents when the first connection is made.
Status CheckCertificatePem(std::string_view pem, const std::string& what);
Status CheckPrivateKeyPem(std::string_view pem, const std::string& what);

// A host name or IP address to verify the server's certificate against.
Status CheckTlsServerName(std::string_view name);

}  // namespace gfp::adapters::apiserver
