// One resource's device-plugin endpoint: a gRPC server on
// <device-plugin-dir>/kubevirt-<NAME>.sock, registered with kubelet. Serves before it registers
// (kubelet dials back during Register).
#pragma once

#include <grpcpp/server.h>

#include <filesystem>
#include <memory>
#include <string>

#include "plugin/core/node_inventory.h"
#include "plugin/core/plugin_core.h"
#include "plugin/rpc/device_plugin_service.h"
#include "plugin/rpc/socket_guard.h"

namespace gfp::plugin::rpc {

class ResourceServer {
 public:
  ResourceServer(core::PluginCore& core, adapters::kubelet_naming::ResourceNaming naming,
                 std::filesystem::path device_plugin_dir);
  ~ResourceServer();

  // Starts serving on the socket path, never taking over one a live server answers on
  // (AlreadyExists naming it). The socket gets mode 0600.
  Status Serve();
  // Logs a failure of Serve: as an error when it is new, at debug level while it repeats.
  void ReportServeFailure(const Status& status);
  // Register with kubelet (version v1beta1, endpoint = socket basename, resource, options).
  Status Register(std::chrono::milliseconds deadline);
  // Stops serving; ends ListAndWatch streams; removes our socket file if it is still ours.
  void Stop();

  bool serving() const { return server_ != nullptr; }
  bool registered() const { return registered_; }
  void set_unregistered() { registered_ = false; }
  // Our socket file is gone or is no longer the one we created (kubelet removed it).
  bool SocketLost() const;
  const adapters::kubelet_naming::ResourceNaming& naming() const { return naming_; }
  std::filesystem::path socket_path() const { return dir_ / naming_.socket_name; }

 private:
  void ShutdownServer();

  core::PluginCore& core_;
  adapters::kubelet_naming::ResourceNaming naming_;
  std::filesystem::path dir_;
  std::unique_ptr<DevicePluginService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::optional<FileIdentity> socket_identity_;
  bool registered_ = false;
  std::string last_serve_failure_;
};

}  // namespace gfp::plugin::rpc
