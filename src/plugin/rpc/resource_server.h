// One resource's device-plugin endpoint: a gRPC server on
// <device-plugin-dir>/kubevirt-<NAME>.sock, registered with kubelet. Serves before it registers
// (kubelet dials back during Register).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "plugin/core/node_inventory.h"
#include "plugin/core/plugin_core.h"
#include "plugin/rpc/device_plugin_service.h"
#include "plugin/rpc/unix_socket_server.h"

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
  void ReportServeFailure(const Status& status) { socket_.ReportServeFailure(status); }
  // Register with kubelet (version v1beta1, endpoint = socket basename, resource, options).
  Status Register(std::chrono::milliseconds deadline);
  // Stops serving; ends ListAndWatch streams; removes our socket file if it is still ours.
  void Stop();

  bool serving() const { return socket_.serving(); }
  bool registered() const { return registered_; }
  void set_unregistered() { registered_ = false; }
  // Our socket file is gone or is no longer the one we created (kubelet removed it).
  bool SocketLost() const { return socket_.SocketLost(); }
  const adapters::kubelet_naming::ResourceNaming& naming() const { return naming_; }
  std::filesystem::path socket_path() const { return socket_.socket_path(); }

 private:
  core::PluginCore& core_;
  adapters::kubelet_naming::ResourceNaming naming_;
  std::filesystem::path dir_;
  std::unique_ptr<DevicePluginService> service_;
  UnixSocketServer socket_;
  bool registered_ = false;
};

}  // namespace gfp::plugin::rpc
