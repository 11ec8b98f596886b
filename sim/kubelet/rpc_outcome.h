// The answer of one gRPC call as the kubelet sees it: the status, and the response when it is OK.
#pragma once

#include <grpcpp/support/status.h>

namespace gfp::kubelet {

template <typename Response>
struct RpcOutcome {
  grpc::Status status;
  Response response;  // meaningful only when status.ok()

  bool ok() const { return status.ok(); }
};

}  // namespace gfp::kubelet
