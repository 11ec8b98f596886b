#include "plugin/grpc/device_plugin_service.h"

#include <spdlog/spdlog.h>

namespace gfp::plugin {
namespace {

grpc::StatusCode ToGrpcCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return grpc::StatusCode::OK;
    case ErrorCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
    case ErrorCode::kDataLoss:
      return grpc::StatusCode::DATA_LOSS;
    case ErrorCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::kInternal:
      return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::UNKNOWN;
}

// ListAndWatch re-checks for shutdown at least this often.
constexpr std::chrono::milliseconds kWatchTick{500};

}  // namespace

grpc::Status ToGrpcStatus(const Status& status) {
  return status.ok() ? grpc::Status::OK : grpc::Status(ToGrpcCode(status.code()), status.message());
}

DevicePluginService::DevicePluginService(PluginCore& core, std::string resource)
    : core_(core), resource_(std::move(resource)) {}

void DevicePluginService::Shutdown() {
  shutting_down_ = true;
  core_.WakeWatchers();
}

v1beta1::DevicePluginOptions DevicePluginService::Options() const {
  v1beta1::DevicePluginOptions options;
  options.set_pre_start_required(core_.fabric_managed());
  options.set_get_preferred_allocation_available(true);
  return options;
}

grpc::Status DevicePluginService::GetDevicePluginOptions(grpc::ServerContext*,
                                                         const v1beta1::Empty*,
                                                         v1beta1::DevicePluginOptions* response) {
  *response = Options();
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::ListAndWatch(
    grpc::ServerContext* context, const v1beta1::Empty*,
    grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  std::uint64_t sent_version = 0;
  std::string sent;
  while (!shutting_down_ && !context->IsCancelled()) {
    const std::uint64_t version = core_.version();
    if (version != sent_version) {
      v1beta1::ListAndWatchResponse response;
      for (const DeviceView& d : core_.Devices(resource_)) {
        auto* device = response.add_devices();
        device->set_id(d.id);
        device->set_health(d.healthy ? "Healthy" : "Unhealthy");
        device->mutable_topology()->add_nodes()->set_id(d.numa_node);
      }
      // The full list again on every change, and only on a change.
      std::string bytes = response.SerializeAsString();
      if (bytes != sent) {
        if (!writer->Write(response)) break;
        sent = std::move(bytes);
      }
      sent_version = version;
    }
    core_.WaitForChange(sent_version, kWatchTick);
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  for (const auto& c : request->container_requests()) {
    if (c.allocation_size() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "negative allocation size");
    }
    auto preferred =
        core_.Preferred(resource_, {c.available_deviceids().begin(), c.available_deviceids().end()},
                        {c.must_include_deviceids().begin(), c.must_include_deviceids().end()},
                        static_cast<std::size_t>(c.allocation_size()));
    if (!preferred.ok()) {
      spdlog::warn("GetPreferredAllocation for {}: {}", resource_, preferred.status().message());
      return ToGrpcStatus(preferred.status());
    }
    auto* out = response->add_container_responses();
    for (const auto& id : *preferred) out->add_deviceids(id);
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Allocate(grpc::ServerContext*,
                                           const v1beta1::AllocateRequest* request,
                                           v1beta1::AllocateResponse* response) {
  std::vector<std::vector<std::string>> containers;
  for (const auto& c : request->container_requests()) {
    containers.emplace_back(c.devices_ids().begin(), c.devices_ids().end());
  }
  auto allocated = core_.Allocate(resource_, containers);
  if (!allocated.ok()) {
    spdlog::warn("Allocate for {} refused: {}", resource_, allocated.status().message());
    return ToGrpcStatus(allocated.status());
  }
  for (const ContainerAllocation& a : *allocated) {
    auto* out = response->add_container_responses();
    (*out->mutable_envs())[a.env_key] = a.env_value;
    for (const auto& spec : a.device_specs) {
      auto* d = out->add_devices();
      d->set_container_path(spec.container_path);
      d->set_host_path(spec.host_path);
      d->set_permissions(spec.permissions);
    }
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::PreStartContainer(
    grpc::ServerContext*, const v1beta1::PreStartContainerRequest* request,
    v1beta1::PreStartContainerResponse*) {
  Status status =
      core_.PreStart(resource_, {request->devices_ids().begin(), request->devices_ids().end()});
  if (!status.ok()) spdlog::warn("PreStartContainer for {}: {}", resource_, status.message());
  return ToGrpcStatus(status);
}

}  // namespace gfp::plugin
