#include "adapters/apiserver/in_cluster.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "adapters/apiserver/config_checks.h"
#include "adapters/apiserver/referenced_file.h"
#include "common/text_escape.h"

namespace gfp::adapters::apiserver {
namespace {

std::string Quote(std::string_view text) { return "\"" + EscapeAndTruncate(text, 128) + "\""; }

// A DNS name, an IPv4 address or an IPv6 address (bare or in brackets): what kubelet sets.
Result<std::string> HostForUrl(const std::string& host) {
  std::string bare = host;
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  const bool ok = !bare.empty() && std::all_of(bare.begin(), bare.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':';
  });
  if (!ok) {
    return InvalidArgument("KUBERNETES_SERVICE_HOST " + Quote(host) +
                           " is not a host name or IP address");
  }
  return bare.find(':') == std::string::npos ? bare : "[" + bare + "]";
}

Result<std::string> PortForUrl(const std::string& port) {
  const bool digits =
      !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
  if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return InvalidArgument("KUBERNETES_SERVICE_PORT " + Quote(port) + " is not a port number");
  }
  return port;
}

Result<ApiServerConfig> Build(const EnvLookup& env, const std::filesystem::path& dir) {
  const std::optional<std::string> host = env("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = env("KUBERNETES_SERVICE_PORT");
  if (!host.has_value() || host->empty() || !port.has_value() || port->empty()) {
    return FailedPrecondition(
        "not running in a pod: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be "
        "set (outside a cluster, give --kubeconfig)");
  }
  ApiServerConfig config;
  GFP_ASSIGN_OR_RETURN(const std::string url_host, HostForUrl(*host));
  GFP_ASSIGN_OR_RETURN(const std::string url_port, PortForUrl(*port));
  GFP_ASSIGN_OR_RETURN(config.server, CheckServerUrl("https://" + url_host + ":" + url_port));
  GFP_ASSIGN_OR_RETURN(config.ca_pem, ReadReferencedFile(dir / "ca.crt", "the CA"));
  GFP_RETURN_IF_ERROR(CheckCertificatePem(
      config.ca_pem, "the CA " + EscapeAndTruncate((dir / "ca.crt").string(), 256)));
  config.auth = AuthKind::kTokenFile;
  config.token_file = dir / "token";
  GFP_RETURN_IF_ERROR(ReadTokenFile(config.token_file).status());
  config.source = "in-cluster service account " + EscapeAndTruncate(dir.string(), 256);
  return config;
}

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<ApiServerConfig> InClusterConfig(const EnvLookup& env,
                                        const std::filesystem::path& service_account_dir) {
  Result<ApiServerConfig> config = Build(env, service_account_dir);
  if (!config.ok()) return config.status().WithContext("in-cluster config");
  return config;
}

}  // namespace gfp::adapters::apiserver
