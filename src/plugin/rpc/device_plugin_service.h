// The kubelet's v1beta1.DevicePlugin service for one resource, on top of PluginCore.
#pragma once

#include <atomic>
#include <string>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "plugin/core/plugin_core.h"

namespace gfp::plugin::rpc {

grpc::Status ToGrpcStatus(const Status& status);

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  DevicePluginService(core::PluginCore& core, std::string resource);

  // Ends every ListAndWatch stream of this service (the server is stopping).
  void Shutdown();

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* context, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* context,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(grpc::ServerContext* context,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* response) override;

  v1beta1::DevicePluginOptions Options() const;

 private:
  core::PluginCore& core_;
  const std::string resource_;
  std::atomic<bool> shutting_down_{false};
};

}  // namespace gfp::plugin::rpc
