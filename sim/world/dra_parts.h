// The parts a DRA-mode world adds (SPEC §11): the fake API server over real HTTPS with a test PKI
// and a token file, this node's Node object, a kubeconfig for serve, the fake kubelet's DRA side,
// and a stand-in scheduler that allocates claims as the real one would (ClaimScheduler).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/status.h"
#include "sim/apiserver/fake_api_server.h"
#include "sim/kubelet/fake_dra_kubelet.h"
#include "sim/world/serve_setup.h"

namespace gfp::simworld {

struct DraParts {
  std::unique_ptr<apisim::FakeApiServer> api;
  std::unique_ptr<kubelet::FakeDraKubelet> kubelet;
  std::filesystem::path token_file;
  std::string node_uid;
};

// Makes the parts under setup.dir and points setup.kubeconfig at them. `node_name` gets a Node.
Result<DraParts> AssembleDraParts(ServeSetup& setup, const std::string& node_name);

}  // namespace gfp::simworld
