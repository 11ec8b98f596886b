// kubelet's k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin service (SPEC §11) over a DraHandler.
//
// Every claim of a request gets an entry in the answer, keyed by its uid, with its own error: a
// refusal of one claim never fails the call. Claims whose fields Kubernetes could not have
// written (uid, namespace, name) or beyond kMaxClaimsPerRequest are refused here, naming the
// field, and never reach the handler. A uid repeated in one request is handled and answered once.
// The claims of one request go to the handler in order, one after the other.
#pragma once

#include <cstddef>

#include "dra/v1/api.grpc.pb.h"
#include "plugin/rpc/dra_handler.h"

namespace gfp::plugin::rpc {

// kubelet sends the claims of one pod for one driver per call: a bound far above that, so that a
// hostile request cannot make the plugin work through an unbounded list.
inline constexpr std::size_t kMaxClaimsPerRequest = 128;

class DraPluginService final : public k8s::io::kubelet::pkg::apis::dra::v1::DRAPlugin::Service {
 public:
  explicit DraPluginService(DraHandler& handler);

  grpc::Status NodePrepareResources(
      grpc::ServerContext* context,
      const k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesRequest* request,
      k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse* response) override;
  grpc::Status NodeUnprepareResources(
      grpc::ServerContext* context,
      const k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesRequest* request,
      k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesResponse* response) override;

 private:
  DraHandler& handler_;
};

}  // namespace gfp::plugin::rpc
