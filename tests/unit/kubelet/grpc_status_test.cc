// The ErrorCode -> gRPC code table the plugin's servers answer with, and its inverse for what the
// kubelet answers: every project code has its own gRPC code and comes back as itself.
#include "adapters/kubelet/grpc_status.h"

#include <gtest/gtest.h>

namespace gfp::kubelet {
namespace {

TEST(GrpcCodeOf, RefusalCodesMapToTheirGrpcCodes) {
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kOk), grpc::StatusCode::OK);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kInvalidArgument),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kFailedPrecondition),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kUnavailable), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kResourceExhausted),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kInternal), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kNotFound), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kAlreadyExists),
            grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kDeadlineExceeded),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(adapters::kubelet::GrpcCodeOf(ErrorCode::kDataLoss), grpc::StatusCode::DATA_LOSS);
}

TEST(GrpcCodeOf, EveryCodeComesBackAsItself) {
  for (ErrorCode code :
       {ErrorCode::kInvalidArgument, ErrorCode::kNotFound, ErrorCode::kFailedPrecondition,
        ErrorCode::kAlreadyExists, ErrorCode::kUnavailable, ErrorCode::kDeadlineExceeded,
        ErrorCode::kDataLoss, ErrorCode::kResourceExhausted, ErrorCode::kInternal}) {
    const Status back = adapters::kubelet::StatusFromGrpc(
        grpc::Status(adapters::kubelet::GrpcCodeOf(code), "why"), "Allocate");
    EXPECT_EQ(back.code(), code) << ErrorCodeName(code) << " came back as "
                                 << ErrorCodeName(back.code()) << ": " << back.message();
  }
}

}  // namespace
}  // namespace gfp::kubelet
