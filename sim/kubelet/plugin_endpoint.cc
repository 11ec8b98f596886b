#include "sim/kubelet/plugin_endpoint.h"

#include <grpcpp/client_context.h>

#include "adapters/kubelet/unix_channel.h"

namespace gfp::kubelet {
namespace {

std::chrono::system_clock::time_point DeadlineAfter(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

}  // namespace

PluginEndpoint::PluginEndpoint(std::string socket_path, std::shared_ptr<grpc::Channel> channel,
                               v1beta1::DevicePluginOptions options)
    : socket_path_(std::move(socket_path)),
      channel_(std::move(channel)),
      stub_(v1beta1::DevicePlugin::NewStub(channel_)),
      options_(std::move(options)) {}

PluginEndpoint::~PluginEndpoint() { Stop(); }

RpcOutcome<std::unique_ptr<PluginEndpoint>> PluginEndpoint::Connect(
    const std::string& socket_path, std::chrono::milliseconds dial_timeout,
    std::chrono::milliseconds options_timeout, const std::function<bool()>& abandoned) {
  RpcOutcome<std::unique_ptr<PluginEndpoint>> out;
  auto channel = adapters::kubelet::MakeUnixSocketChannel(socket_path);
  // Wait in slices so that an abandoned registration does not hold up a server shutdown.
  const auto dial_deadline = std::chrono::steady_clock::now() + dial_timeout;
  bool connected = false;
  while (!connected && std::chrono::steady_clock::now() < dial_deadline && !abandoned()) {
    connected = channel->WaitForConnected(DeadlineAfter(std::chrono::milliseconds(50)));
  }
  if (!connected) {
    out.status =
        grpc::Status(grpc::StatusCode::UNKNOWN, "failed to dial device plugin: connecting to " +
                                                    socket_path + ": no answer within " +
                                                    std::to_string(dial_timeout.count()) + " ms");
    return out;
  }
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_timeout));
  v1beta1::DevicePluginOptions options;
  const grpc::Status status = stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &options);
  if (!status.ok()) {
    out.status =
        grpc::Status(grpc::StatusCode::UNKNOWN, "failed to get device plugin options from " +
                                                    socket_path + ": " + status.error_message());
    return out;
  }
  out.response.reset(new PluginEndpoint(socket_path, std::move(channel), std::move(options)));
  return out;
}

void PluginEndpoint::StartListAndWatch(DevicesCallback on_devices,
                                       StreamEndCallback on_stream_end) {
  std::lock_guard lock(mu_);
  if (reader_.joinable()) return;
  reader_ = std::thread(
      [this, on_devices = std::move(on_devices), on_stream_end = std::move(on_stream_end)] {
        // No deadline, like the kubelet: the stream lives as long as the registration.
        auto reader = stub_->ListAndWatch(&stream_context_, v1beta1::Empty());
        v1beta1::ListAndWatchResponse response;
        while (reader->Read(&response)) on_devices(response);
        on_stream_end(reader->Finish());
      });
}

void PluginEndpoint::Stop() {
  std::thread reader;
  {
    std::lock_guard lock(mu_);
    stream_context_.TryCancel();
    reader = std::move(reader_);
  }
  if (reader.joinable()) reader.join();
}

RpcOutcome<v1beta1::PreferredAllocationResponse> PluginEndpoint::GetPreferredAllocation(
    const v1beta1::PreferredAllocationRequest& request, std::chrono::milliseconds timeout) {
  RpcOutcome<v1beta1::PreferredAllocationResponse> out;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  out.status = stub_->GetPreferredAllocation(&context, request, &out.response);
  return out;
}

RpcOutcome<v1beta1::AllocateResponse> PluginEndpoint::Allocate(
    const v1beta1::AllocateRequest& request, std::chrono::milliseconds timeout) {
  RpcOutcome<v1beta1::AllocateResponse> out;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  out.status = stub_->Allocate(&context, request, &out.response);
  return out;
}

RpcOutcome<v1beta1::PreStartContainerResponse> PluginEndpoint::PreStartContainer(
    const v1beta1::PreStartContainerRequest& request, std::chrono::milliseconds timeout) {
  RpcOutcome<v1beta1::PreStartContainerResponse> out;
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(timeout));
  out.status = stub_->PreStartContainer(&context, request, &out.response);
  return out;
}

}  // namespace gfp::kubelet
