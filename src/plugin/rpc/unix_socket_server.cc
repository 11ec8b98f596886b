#include "plugin/rpc/unix_socket_server.h"

#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "adapters/kubelet/grpc_lifetime.h"

namespace gfp::plugin::rpc {
namespace {

// gRPC's sync server makes a thread when a call finds no idle one, and after a call ends its
// thread if this many are idle already. Threads are made only as calls overlap, so at rest there
// are as few as before; at 4, three overlapping callers still saw threads made and ended.
constexpr int kMaxIdleServerThreads = 8;

}  // namespace

UnixSocketServer::UnixSocketServer(std::string what, std::filesystem::path socket_path)
    : what_(std::move(what)), path_(std::move(socket_path)) {}

UnixSocketServer::~UnixSocketServer() { Stop(); }

Status UnixSocketServer::Serve(const std::vector<grpc::Service*>& services) {
  if (server_) return Status::Ok();
  GFP_RETURN_IF_ERROR(CheckSocketPathFree(path_));
  adapters::kubelet::KeepGrpcInitialized();
  // gRPC unlinks the path it binds (before binding and at shutdown): give it a private name, in
  // a folder only we can enter, and move the socket onto our path only once nothing live answers
  // there (socket_guard.h).
  GFP_ASSIGN_OR_RETURN(const std::filesystem::path bound, MakePrivateBindPath(path_.parent_path()));
  grpc::ServerBuilder builder;
  // kubelet's calls overlap (a ListAndWatch stream holds a thread for its life, Allocate and
  // GetPreferredAllocation meet); at gRPC's default (2 idle threads) a thread was made and one
  // ended for almost every overlap, each end a TLB shoot-down interrupting every other thread.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              kMaxIdleServerThreads);
  builder.AddListeningPort("unix:" + bound.string(), grpc::InsecureServerCredentials());
  for (grpc::Service* service : services) builder.RegisterService(service);
  server_ = builder.BuildAndStart();
  if (!server_) {
    RemovePrivateBindPath(bound);
    return Unavailable("cannot serve on " + bound.string() + " (to be moved to " + path_.string() +
                       ")");
  }
  if (Status installed = InstallSocket(bound, path_); !installed.ok()) {
    ShutdownServer();
    RemovePrivateBindPath(bound);
    return installed;
  }
  socket_identity_ = IdentityOf(path_);
  last_serve_failure_.clear();
  spdlog::info("serving {} on {}", what_, path_.string());
  return Status::Ok();
}

void UnixSocketServer::ReportServeFailure(const Status& status) {
  const std::string text = "cannot serve " + what_ + ": " + status.message() +
                           " (retrying; the socket is never taken over)";
  if (text == last_serve_failure_) {
    spdlog::debug("{}", text);
    return;
  }
  spdlog::error("{}", text);
  last_serve_failure_ = text;
}

bool UnixSocketServer::SocketLost() const {
  if (!server_) return false;
  return IdentityOf(path_) != socket_identity_;
}

void UnixSocketServer::ShutdownServer() {
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
}

void UnixSocketServer::Stop() {
  if (!server_) return;
  ShutdownServer();
  if (socket_identity_ && IdentityOf(path_) == socket_identity_) {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  socket_identity_.reset();
}

}  // namespace gfp::plugin::rpc
