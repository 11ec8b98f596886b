// A gRPC server on one installed Unix socket path, with the rules of socket_guard.h: a live
// socket of another server is never taken over, the server binds a temporary name inside a
// private 0700 folder, the socket gets mode 0600 there before it is renamed into place (no moment
// in which others may connect, whatever the umask),
// and Stop removes the path only while it is still the file we installed. Used by the
// device-plugin sockets and by the DRA sockets (SPEC §11).
#pragma once

#include <grpcpp/server.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/rpc/socket_guard.h"

namespace grpc {
class Service;
}  // namespace grpc

namespace gfp::plugin::rpc {

class UnixSocketServer {
 public:
  // `what` names the server in log lines ("serving <what> on <path>").
  UnixSocketServer(std::string what, std::filesystem::path socket_path);
  ~UnixSocketServer();  // Stop()
  UnixSocketServer(const UnixSocketServer&) = delete;
  UnixSocketServer& operator=(const UnixSocketServer&) = delete;

  // Serves `services` (owned by the caller, alive until Stop) on the socket path. AlreadyExists
  // naming the path when a live server answers there; FailedPrecondition when another kind of
  // file is there. Does nothing when already serving.
  Status Serve(const std::vector<grpc::Service*>& services);
  // Logs a failure of Serve: as an error when it is new, at debug level while it repeats.
  void ReportServeFailure(const Status& status);
  // Stops serving (calls in flight get up to 2 s) and removes the socket file if it is still the
  // one we installed (kubelet may have replaced it, or another server may answer there now).
  void Stop();

  bool serving() const { return server_ != nullptr; }
  // Our socket file is gone or is no longer the one we installed (kubelet removed it).
  bool SocketLost() const;
  const std::filesystem::path& socket_path() const { return path_; }

 private:
  void ShutdownServer();

  const std::string what_;
  const std::filesystem::path path_;
  std::unique_ptr<grpc::Server> server_;
  std::optional<FileIdentity> socket_identity_;
  std::string last_serve_failure_;
};

}  // namespace gfp::plugin::rpc
