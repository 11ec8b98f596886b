// Translating gRPC statuses into the project's Status values, keeping the gRPC code name in the
// message ("RESOURCE_EXHAUSTED: ...") so logs and the journal say what the wire said, and the
// project's error codes into the gRPC codes its servers answer with.
#pragma once

#include <grpcpp/support/status.h>

#include <string>

#include "common/status.h"

namespace gfp::adapters::kubelet {

// "OK", "CANCELLED", ..., "UNAUTHENTICATED"; "CODE_<n>" for values outside the enum.
std::string GrpcCodeName(grpc::StatusCode code);

// The gRPC code a call that failed with `code` answers with (the plugin's servers use it for every
// refusal): INVALID_ARGUMENT, FAILED_PRECONDITION, UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL, ...
grpc::StatusCode GrpcCodeOf(ErrorCode code);

// Maps a failed gRPC status to a Status whose message is "<what>: <CODE_NAME>: <grpc message>".
// An OK gRPC status maps to an OK Status.
Status StatusFromGrpc(const grpc::Status& status, const std::string& what);

}  // namespace gfp::adapters::kubelet
