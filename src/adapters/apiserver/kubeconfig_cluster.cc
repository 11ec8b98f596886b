// What a kubeconfig cluster entry gives: where the server is and which CA vouches for it.
#include <algorithm>
#include <cctype>

#include "adapters/apiserver/config_checks.h"
#include "adapters/apiserver/kubeconfig_entry.h"

namespace gfp::adapters::apiserver {
namespace {

// insecure-skip-tls-verify as YAML 1.1 spells a bool (kubectl reads it so): true is refused,
// since a token sent to an unverified server is a token given away.
Status CheckVerifiesServer(const EntryReader& cluster) {
  GFP_ASSIGN_OR_RETURN(std::string skip, cluster.Text("insecure-skip-tls-verify"));
  std::transform(skip.begin(), skip.end(), skip.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (skip.empty() || skip == "false" || skip == "no" || skip == "off" || skip == "n") {
    return Status::Ok();
  }
  if (skip == "true" || skip == "yes" || skip == "on" || skip == "y") {
    return cluster.Error(
        "sets insecure-skip-tls-verify: gpu-fabric-plugin always verifies the API server's "
        "certificate: give the cluster's CA (certificate-authority or "
        "certificate-authority-data)");
  }
  return cluster.Error("has insecure-skip-tls-verify that is neither true nor false");
}

}  // namespace

Status ApplyCluster(const EntryReader& cluster, ApiServerConfig& config) {
  GFP_RETURN_IF_ERROR(CheckVerifiesServer(cluster));
  if (cluster.Has("proxy-url")) {
    return cluster.Error("sets proxy-url, which gpu-fabric-plugin does not support");
  }
  GFP_ASSIGN_OR_RETURN(const std::string server, cluster.Text("server"));
  if (server.empty()) return cluster.Error("has no server");
  Result<std::string> url = CheckServerUrl(server);
  if (!url.ok()) return url.status().WithContext(cluster.what());
  config.server = std::move(url).value();

  GFP_ASSIGN_OR_RETURN(auto ca,
                       cluster.DataOrFile("certificate-authority-data", "certificate-authority"));
  if (!ca.has_value()) {
    return cluster.Error(
        "has no CA (certificate-authority or certificate-authority-data): the server's "
        "certificate could not be verified");
  }
  GFP_RETURN_IF_ERROR(CheckCertificatePem(*ca, "the CA").WithContext(cluster.what()));
  config.ca_pem = std::move(*ca);

  GFP_ASSIGN_OR_RETURN(config.tls_server_name, cluster.Text("tls-server-name"));
  if (!config.tls_server_name.empty()) {
    GFP_RETURN_IF_ERROR(CheckTlsServerName(config.tls_server_name).WithContext(cluster.what()));
  }
  return Status::Ok();
}

}  // namespace gfp::adapters::apiserver
