#include "plugin/rpc/device_plugin_service.h"

#include <spdlog/spdlog.h>

#include "adapters/kubelet/grpc_status.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "plugin/core/log_text.h"

namespace gfp::plugin::rpc {
namespace {

// ListAndWatch re-checks for shutdown at least this often.
constexpr std::chrono::milliseconds kWatchTick{500};

// Kubelet-supplied IDs as a log line carries them: escaped, and cut when there are many.
template <typename Ids>
std::string IdsText(const Ids& ids) {
  return "[" + core::LogText(Join(ids), 256) + "]";
}

std::string ResultText(const Status& status) {
  return status.ok() ? "ok" : "refused: " + core::LogText(status.message(), 1024);
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

grpc::Status ToGrpcStatus(const Status& status) {
  return status.ok() ? grpc::Status::OK
                     : grpc::Status(adapters::kubelet::GrpcCodeOf(status.code()), status.message());
}

DevicePluginService::DevicePluginService(core::PluginCore& core, std::string resource)
    : core_(core), resource_(std::move(resource)) {}

void DevicePluginService::Shutdown() {
  shutting_down_ = true;
  core_.WakeWatchers();
}

v1beta1::DevicePluginOptions DevicePluginService::Options() const {
  // mdev vGPUs: no partition to verify, no preferred allocation (the Go plugin's vGPU plugin
  // advertises neither, upstream-behaviour.md §1.11).
  const core::ResourceDevices* r = core_.inventory().FindResource(resource_);
  const bool mdev = r && r->kind == sm::DeviceKind::kMdev;
  v1beta1::DevicePluginOptions options;
  options.set_pre_start_required(core_.fabric_managed() && !mdev);
  options.set_get_preferred_allocation_available(!mdev);
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
  spdlog::debug("ListAndWatch {}: stream opened", resource_);
  while (!shutting_down_ && !context->IsCancelled()) {
    const std::uint64_t version = core_.version();
    if (version != sent_version) {
      v1beta1::ListAndWatchResponse response;
      for (const core::DeviceView& d : core_.Devices(resource_)) {
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
        if (spdlog::should_log(spdlog::level::debug)) {
          int healthy = 0;
          for (const auto& d : response.devices()) healthy += d.health() == "Healthy" ? 1 : 0;
          spdlog::debug("ListAndWatch {}: sent {} devices ({} Healthy)", resource_,
                        response.devices_size(), healthy);
        }
      }
      sent_version = version;
    }
    core_.WaitForChange(sent_version, kWatchTick);
  }
  spdlog::debug("ListAndWatch {}: stream ended ({})", resource_,
                shutting_down_ ? "shutting down" : "kubelet closed it");
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(
    grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* request,
    v1beta1::PreferredAllocationResponse* response) {
  const auto started = std::chrono::steady_clock::now();
  for (const auto& c : request->container_requests()) {
    if (c.allocation_size() < 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "negative allocation size");
    }
    auto preferred =
        core_.Preferred(resource_, {c.available_deviceids().begin(), c.available_deviceids().end()},
                        {c.must_include_deviceids().begin(), c.must_include_deviceids().end()},
                        static_cast<std::size_t>(c.allocation_size()));
    spdlog::debug(
        "GetPreferredAllocation {} size {} available {} must-include {}: {} {} in {:.2f} ms",
        resource_, c.allocation_size(), IdsText(c.available_deviceids()),
        IdsText(c.must_include_deviceids()), ResultText(preferred.status()),
        preferred.ok() ? IdsText(*preferred) : "", MillisSince(started));
    if (!preferred.ok()) {
      spdlog::warn("GetPreferredAllocation for {}: {}", resource_,
                   core::LogText(preferred.status().message(), 1024));
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
  const auto started = std::chrono::steady_clock::now();
  auto allocated = core_.Allocate(resource_, containers);
  if (auto* observer = core_.observer()) {
    observer->RecordAllocate(
        resource_, containers.size(), allocated.ok(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  if (spdlog::should_log(spdlog::level::debug)) {
    std::string requested;
    for (const auto& ids : containers) requested += (requested.empty() ? "" : " ") + IdsText(ids);
    spdlog::debug("Allocate {} {}: {} in {:.2f} ms", resource_, requested,
                  ResultText(allocated.status()), MillisSince(started));
  }
  if (!allocated.ok()) {
    spdlog::warn("Allocate for {} refused: {}", resource_,
                 core::LogText(allocated.status().message(), 1024));
    return ToGrpcStatus(allocated.status());
  }
  for (const core::ContainerAllocation& a : *allocated) {
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
  const auto started = std::chrono::steady_clock::now();
  Status status =
      core_.PreStart(resource_, {request->devices_ids().begin(), request->devices_ids().end()});
  spdlog::debug("PreStartContainer {} {}: {} in {:.2f} ms", resource_,
                IdsText(request->devices_ids()), ResultText(status), MillisSince(started));
  if (!status.ok()) {
    spdlog::warn("PreStartContainer for {}: {}", resource_, core::LogText(status.message(), 1024));
  }
  return ToGrpcStatus(status);
}

}  // namespace gfp::plugin::rpc
