#include "adapters/kubelet/grpc_status.h"

namespace gfp::adapters::kubelet {

std::string GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    case grpc::StatusCode::DO_NOT_USE:
      break;
  }
  return "CODE_" + std::to_string(static_cast<int>(code));
}

grpc::StatusCode GrpcCodeOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return grpc::StatusCode::OK;
    case ErrorCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorCode::kDataLoss:
      return grpc::StatusCode::DATA_LOSS;
    case ErrorCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

namespace {

ErrorCode ErrorCodeFromGrpc(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return ErrorCode::kOk;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return ErrorCode::kInvalidArgument;
    case grpc::StatusCode::NOT_FOUND:
      return ErrorCode::kNotFound;
    case grpc::StatusCode::ALREADY_EXISTS:
      return ErrorCode::kAlreadyExists;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return ErrorCode::kFailedPrecondition;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return ErrorCode::kDeadlineExceeded;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return ErrorCode::kResourceExhausted;
    case grpc::StatusCode::DATA_LOSS:
      return ErrorCode::kDataLoss;
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNIMPLEMENTED:
      return ErrorCode::kInternal;
    // The kubelet reports its own failures as UNKNOWN (plain Go errors); together with
    // UNAVAILABLE, CANCELLED, ABORTED they mean "the kubelet could not answer now".
    default:
      return ErrorCode::kUnavailable;
  }
}

}  // namespace

Status StatusFromGrpc(const grpc::Status& status, const std::string& what) {
  if (status.ok()) return Status::Ok();
  return Status(ErrorCodeFromGrpc(status.error_code()),
                what + ": " + GrpcCodeName(status.error_code()) + ": " + status.error_message());
}

}  // namespace gfp::adapters::kubelet
