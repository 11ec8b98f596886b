// No --kubeconfig: the pod's service account, as client-go's rest.InClusterConfig finds it.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "adapters/apiserver/api_config.h"
#include "common/status.h"

namespace gfp::adapters::apiserver {

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// An environment variable's value, nullopt when unset. Tests pass a map; serve passes
// ProcessEnvironment().
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnvironment();

// https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT (an IPv6 host in brackets), the CA
// <dir>/ca.crt and the token file <dir>/token (read once here to check it; kept as a path because
// kubelet rotates it). Errors start "in-cluster config: " and say what is missing; when the
// variables are unset the message says this is not a pod and --kubeconfig is the way out.
Result<ApiServerConfig> InClusterConfig(
    const EnvLookup& env, const std::filesystem::path& service_account_dir = kServiceAccountDir);

}  // namespace gfp::adapters::apiserver
