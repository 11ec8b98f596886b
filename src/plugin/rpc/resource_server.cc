#include "plugin/rpc/resource_server.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include "adapters/kubelet/grpc_status.h"
#include "adapters/kubelet/unix_channel.h"

namespace gfp::plugin::rpc {

ResourceServer::ResourceServer(core::PluginCore& core,
                               adapters::kubelet_naming::ResourceNaming naming,
                               std::filesystem::path device_plugin_dir)
    : core_(core), naming_(std::move(naming)), dir_(std::move(device_plugin_dir)) {}

ResourceServer::~ResourceServer() { Stop(); }

Status ResourceServer::Serve() {
  if (server_) return Status::Ok();
  const auto path = socket_path();
  GFP_RETURN_IF_ERROR(CheckSocketPathFree(path));
  // gRPC unlinks the path it binds (before binding and at shutdown): give it a private name and
  // move the socket onto our path only once nothing live answers there (socket_guard.h).
  const auto bound = TemporarySocketPath(dir_);
  service_ = std::make_unique<DevicePluginService>(core_, naming_.resource_name);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + bound.string(), grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) {
    service_.reset();
    return Unavailable("cannot serve on " + bound.string() + " (to be moved to " + path.string() +
                       ")");
  }
  if (Status installed = InstallSocket(bound, path); !installed.ok()) {
    ShutdownServer();
    std::error_code ignored;
    std::filesystem::remove(bound, ignored);
    return installed;
  }
  socket_identity_ = IdentityOf(path);
  last_serve_failure_.clear();
  spdlog::info("serving {} on {}", naming_.resource_name, path.string());
  return Status::Ok();
}

void ResourceServer::ReportServeFailure(const Status& status) {
  const std::string text = "cannot serve " + naming_.resource_name + ": " + status.message() +
                           " (retrying; the socket is never taken over)";
  if (text == last_serve_failure_) {
    spdlog::debug("{}", text);
    return;
  }
  spdlog::error("{}", text);
  last_serve_failure_ = text;
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

bool ResourceServer::SocketLost() const {
  if (!server_) return false;
  return IdentityOf(socket_path()) != socket_identity_;
}

void ResourceServer::ShutdownServer() {
  service_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
  service_.reset();
}

void ResourceServer::Stop() {
  if (!server_) return;
  ShutdownServer();
  registered_ = false;
  // Remove the socket only if it is still the one we installed (kubelet may have replaced the
  // directory's files, or another server may now answer there).
  if (socket_identity_ && IdentityOf(socket_path()) == socket_identity_) {
    std::error_code ignored;
    std::filesystem::remove(socket_path(), ignored);
  }
  socket_identity_.reset();
}

}  // namespace gfp::plugin::rpc
