// A kubeconfig for a fake API server, in the form adapters/apiserver's LoadKubeconfig accepts:
// one cluster (server, certificate-authority file), one user (tokenFile, or client-certificate
// and client-key files), one context, current-context set. Written with mode 0600.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace gfp::apisim {

struct KubeconfigCredential {
  std::filesystem::path token_file = {};        // either this
  std::filesystem::path client_cert_file = {};  // or these two
  std::filesystem::path client_key_file = {};
};

Status WriteKubeconfig(const std::filesystem::path& path, const std::string& server_url,
                       const std::filesystem::path& ca_file,
                       const KubeconfigCredential& credential);

}  // namespace gfp::apisim
