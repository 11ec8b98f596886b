#include "sim/world/dra_parts.h"

#include <fstream>

#include "sim/apiserver/kubeconfig_writer.h"
#include "sim/apiserver/test_pki.h"

namespace gfp::simworld {

Result<DraParts> AssembleDraParts(ServeSetup& setup, const std::string& node_name) {
  const auto dir = setup.dir / "apiserver";
  GFP_ASSIGN_OR_RETURN(apisim::TestPki pki, apisim::MakeTestPki(dir));
  DraParts parts;
  parts.token_file = dir / "token";
  {
    std::ofstream token(parts.token_file);
    token << "world-token-1\n";
    if (!token) return Internal("cannot write " + parts.token_file.string());
  }
  apisim::FakeApiServer::Options options;
  options.pki = pki;
  options.token_file = parts.token_file;
  GFP_ASSIGN_OR_RETURN(parts.api, apisim::FakeApiServer::Start(options));
  parts.node_uid = parts.api->PutNode(node_name);
  setup.kubeconfig = dir / "kubeconfig";
  GFP_RETURN_IF_ERROR(apisim::WriteKubeconfig(setup.kubeconfig, parts.api->url(), pki.ca_file,
                                              {parts.token_file, {}, {}}));
  std::error_code ec;
  for (const auto& d :
       {setup.kubelet_registry_dir(), setup.kubelet_plugins_dir(), setup.cdi_dir()}) {
    std::filesystem::create_directories(d, ec);
    if (ec) return Internal("cannot create " + d.string() + ": " + ec.message());
  }
  parts.kubelet = std::make_unique<kubelet::FakeDraKubelet>(setup.kubelet_registry_dir());
  return parts;
}

}  // namespace gfp::simworld
