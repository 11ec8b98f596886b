// The fake kubelet's connection to one registered device plugin: dialled during Register, like
// kubelet >= 1.25, then a background ListAndWatch reader and the calls the kubelet makes.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "sim/kubelet/rpc_outcome.h"

namespace gfp::kubelet {

class PluginEndpoint {
 public:
  using DevicesCallback = std::function<void(const v1beta1::ListAndWatchResponse&)>;
  using StreamEndCallback = std::function<void(const grpc::Status&)>;

  // Dials `socket_path`, waiting up to `dial_timeout` for a connection (the kubelet's blocking
  // dial), then asks GetDevicePluginOptions. Failure statuses carry the kubelet's wording
  // ("failed to dial device plugin: ..."). The dial gives up early once `abandoned` says so (the
  // Register call that asked for it was cancelled).
  static RpcOutcome<std::unique_ptr<PluginEndpoint>> Connect(
      const std::string& socket_path, std::chrono::milliseconds dial_timeout,
      std::chrono::milliseconds options_timeout, const std::function<bool()>& abandoned);

  ~PluginEndpoint();  // Stop()
  PluginEndpoint(const PluginEndpoint&) = delete;
  PluginEndpoint& operator=(const PluginEndpoint&) = delete;

  // Starts reading ListAndWatch in a background thread; each message goes to `on_devices`, and
  // `on_stream_end` runs once when the stream ends for any reason (including Stop()).
  void StartListAndWatch(DevicesCallback on_devices, StreamEndCallback on_stream_end);
  // Cancels the stream and joins the reader. Idempotent. Must not be called from a callback.
  void Stop();

  const v1beta1::DevicePluginOptions& options() const { return options_; }
  const std::string& socket_path() const { return socket_path_; }

  RpcOutcome<v1beta1::PreferredAllocationResponse> GetPreferredAllocation(
      const v1beta1::PreferredAllocationRequest& request, std::chrono::milliseconds timeout);
  RpcOutcome<v1beta1::AllocateResponse> Allocate(const v1beta1::AllocateRequest& request,
                                                 std::chrono::milliseconds timeout);
  RpcOutcome<v1beta1::PreStartContainerResponse> PreStartContainer(
      const v1beta1::PreStartContainerRequest& request, std::chrono::milliseconds timeout);

 private:
  PluginEndpoint(std::string socket_path, std::shared_ptr<grpc::Channel> channel,
                 v1beta1::DevicePluginOptions options);

  const std::string socket_path_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub_;
  const v1beta1::DevicePluginOptions options_;

  std::mutex mu_;
  grpc::ClientContext stream_context_;
  std::thread reader_;
};

}  // namespace gfp::kubelet
