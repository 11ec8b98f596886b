// pluginregistration v1 Registration (SPEC §11), served on <registry-dir>/<driver>-reg.sock:
// kubelet's plugin watcher asks GetInfo, dials the endpoint it names, and tells the plugin with
// NotifyRegistrationStatus whether it took it.
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "plugin/rpc/dra_handler.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace gfp::plugin::rpc {

inline constexpr char kDraPluginType[] = "DRAPlugin";
inline constexpr char kDraServiceVersion[] = "v1.DRAPlugin";

class DraRegistrationService final : public pluginregistration::Registration::Service {
 public:
  // `endpoint`: the absolute path of the DRA service's socket.
  DraRegistrationService(DraHandler& handler, std::string driver, std::filesystem::path endpoint);

  grpc::Status GetInfo(grpc::ServerContext* context, const pluginregistration::InfoRequest* request,
                       pluginregistration::PluginInfo* response) override;
  grpc::Status NotifyRegistrationStatus(
      grpc::ServerContext* context, const pluginregistration::RegistrationStatus* request,
      pluginregistration::RegistrationStatusResponse* response) override;

  // kubelet's latest answer said registered.
  bool registered() const { return registered_.load(); }
  // Forgets kubelet's answer (the socket is served anew: kubelet must register us again).
  void ForgetRegistration() { registered_.store(false); }

 private:
  DraHandler& handler_;
  const std::string driver_;
  const std::filesystem::path endpoint_;
  std::atomic<bool> registered_{false};
};

}  // namespace gfp::plugin::rpc
