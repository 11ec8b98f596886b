#include "plugin/rpc/resource_server.h"

#include <grpcpp/create_channel.h>
#include <spdlog/spdlog.h>

#include "adapters/kubelet/grpc_status.h"
#include "adapters/kubelet/unix_channel.h"

namespace gfp::plugin::rpc {

ResourceServer::ResourceServer(core::PluginCore& core,
                               adapters::kubelet_naming::ResourceNaming naming,
                               std::filesystem::path device_plugin_dir)
    : core_(core),
      naming_(std::move(naming)),
      dir_(std::move(device_plugin_dir)),
      socket_(naming_.resource_name, dir_ / naming_.socket_name) {}

ResourceServer::~ResourceServer() { Stop(); }

Status ResourceServer::Serve() {
  if (socket_.serving()) return Status::Ok();
  service_ = std::make_unique<DevicePluginService>(core_, naming_.resource_name);
  if (Status served = socket_.Serve({service_.get()}); !served.ok()) {
    service_->Shutdown();
    service_.reset();
    return served;
  }
  return Status::Ok();
}

Status ResourceServer::Register(std::chrono::milliseconds deadline) {
  const auto kubelet_socket = dir_ / "kubelet.sock";
  auto channel = adapters::kubelet::MakeUnixSocketChannel(kubelet_socket.string());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint(naming_.socket_name);
  request.set_resource_name(naming_.resource_name);
  *request.mutable_options() = service_->Options();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  v1beta1::Empty response;
  GFP_RETURN_IF_ERROR(adapters::kubelet::StatusFromGrpc(
      stub->Register(&context, request, &response),
      "Register " + naming_.resource_name + " with " + kubelet_socket.string()));
  registered_ = true;
  spdlog::info("registered {} with kubelet", naming_.resource_name);
  return Status::Ok();
}

void ResourceServer::Stop() {
  if (!socket_.serving()) return;
  // End the ListAndWatch streams first: the server's shutdown waits for calls in flight.
  service_->Shutdown();
  socket_.Stop();
  service_.reset();
  registered_ = false;
}

}  // namespace gfp::plugin::rpc
