// Keeps the gRPC library initialized for the rest of the process.
//
// With grpc 1.51, destroying the last gRPC object runs grpc_shutdown(), which joins an executor
// thread that may sit in a 10 s epoll_wait: servers and channels that come and go (tests, the
// demo, kubelet restarts) then stall for 10 s now and then. Holding one library reference for the
// life of the process keeps that shutdown from ever running mid-process; the OS reclaims
// everything at exit. It also turns off abseil's mutex deadlock detection (gRPC's mutexes are
// absl::Mutex; see grpc_lifetime.cc).
#pragma once

namespace gfp::adapters::kubelet {

// Idempotent and thread-safe; call before creating gRPC servers or channels.
void KeepGrpcInitialized();

}  // namespace gfp::adapters::kubelet
