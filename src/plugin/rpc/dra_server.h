// The DRA kubelet plugin's sockets (SPEC §11): the DRAPlugin service on
// <plugins-dir>/<driver>/dra.sock and the plugin-watcher registration on
// <registry-dir>/<driver>-reg.sock, both through UnixSocketServer (mode 0600, a live socket of
// another process never taken over, only our own files removed).
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"
#include "plugin/rpc/dra_handler.h"
#include "plugin/rpc/dra_plugin_service.h"
#include "plugin/rpc/dra_registration_service.h"
#include "plugin/rpc/unix_socket_server.h"

namespace gfp::plugin::rpc {

class DraServer {
 public:
  // `driver` must already be a valid DRA driver name (checked with the flags).
  DraServer(DraHandler& handler, std::string driver, const std::filesystem::path& registry_dir,
            const std::filesystem::path& plugins_dir);
  ~DraServer();  // Stop()
  DraServer(const DraServer&) = delete;
  DraServer& operator=(const DraServer&) = delete;

  // Creates <plugins-dir>/<driver>/ (mode 0750) and serves dra.sock, then the registration
  // socket: kubelet's plugin watcher dials the registration socket first and the endpoint after,
  // so the endpoint must answer by then. Serves what is not served yet (call again to retry).
  Status Serve();
  // Logs a failure of Serve once per new failure (debug while it repeats).
  void ReportServeFailure(const Status& status);
  // Stops both servers; removes each socket file only if it is still ours.
  void Stop();

  bool serving() const { return dra_socket_.serving() && registration_socket_.serving(); }
  // kubelet's latest NotifyRegistrationStatus said registered (false again after Stop). May be
  // called from any thread.
  bool registered() const { return registration_service_.registered(); }
  // Either socket file is gone or replaced (kubelet wipes its plugin folders): Stop and Serve.
  bool SocketLost() const;

  std::filesystem::path dra_socket_path() const { return dra_socket_.socket_path(); }
  std::filesystem::path registration_socket_path() const {
    return registration_socket_.socket_path();
  }

 private:
  const std::string driver_;
  // Both synchronous services: each may be registered again with the next server.
  DraPluginService dra_service_;
  DraRegistrationService registration_service_;
  UnixSocketServer dra_socket_;
  UnixSocketServer registration_socket_;
  std::string last_serve_failure_;
};

}  // namespace gfp::plugin::rpc
