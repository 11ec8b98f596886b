// Translating gRPC statuses into the project's Status values, keeping the gRPC code name in the
// message ("RESOURCE_EXHAUSTED: ...") so logs and the journal say what the wire said.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "common/status.h"

namespace gfp::kubelet {

// "OK", "CANCELLED", ..., "UNAUTHENTICATED"; "CODE_<n>" for values outside the enum.
std::string GrpcCodeName(grpc::StatusCode code);

// Maps a failed gRPC status to a Status whose message is "<what>: <CODE_NAME>: <grpc message>".
// An OK gRPC status maps to an OK Status.
Status StatusFromGrpc(const grpc::Status& status, const std::string& what);

}  // namespace gfp::kubelet
