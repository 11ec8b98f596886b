// `--kubeconfig`: the API server and credentials of a kubeconfig file's current context.
#pragma once

#include <cstddef>
#include <filesystem>

#include "adapters/apiserver/api_config.h"
#include "common/status.h"

namespace gfp::adapters::apiserver {

// Larger than any real kubeconfig with a few embedded certificates; a larger file is refused
// unread rather than handed to the YAML parser.
inline constexpr std::size_t kMaxKubeconfigBytes = 1024 * 1024;

// Follows current-context to its context, cluster and user, and reads every file they name
// (relative paths against the kubeconfig's folder, as kubectl does). Every refusal is one
// sentence starting "kubeconfig <path>: " and naming the entry and the reason. Refused:
// unreadable or oversized files, text that is not a kubeconfig, no current-context or a name
// that points nowhere, a server that is not https, insecure-skip-tls-verify, proxy-url, no CA,
// exec / auth-provider / basic auth / impersonation, no credential, more than one credential
// (token, tokenFile, client certificate: the rule is exactly one), a field given both as file and
// as *-data, bad base64, PEM text that holds no certificate or key.
Result<ApiServerConfig> LoadKubeconfig(const std::filesystem::path& path);

}  // namespace gfp::adapters::apiserver
