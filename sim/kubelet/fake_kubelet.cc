#include "sim/kubelet/fake_kubelet.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include <algorithm>
#include <set>

#include "adapters/kubelet/grpc_lifetime.h"
#include "adapters/kubelet/unix_channel.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "sim/kubelet/device_selection.h"
#include "sim/kubelet/extended_resource_name.h"
#include "sim/kubelet/plugin_endpoint.h"
#include "sim/kubelet/pod_resources_builder.h"
#include "sim/kubelet/socket_files.h"

namespace gfp::kubelet {
namespace {

constexpr char kSupportedVersion[] = "v1beta1";
constexpr char kHealthy[] = "Healthy";

std::string PodKey(const std::string& pod_namespace, const std::string& pod_name) {
  return pod_namespace + "/" + pod_name;
}

// Thin gRPC adapter; a fresh one per server because a service object belongs to one server.
class RegistrationService final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationService(FakeKubelet* kubelet) : kubelet_(kubelet) {}

  grpc::Status Register(grpc::ServerContext* context, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override {
    return kubelet_->HandleRegister(context, *request);
  }

 private:
  FakeKubelet* kubelet_;
};

std::vector<HeldDevice> HeldDevicesOf(const std::vector<std::string>& ids,
                                      const std::map<std::string, std::vector<int64_t>>& numa) {
  std::vector<HeldDevice> held;
  for (const std::string& id : ids) {
    auto it = numa.find(id);
    held.push_back({id, it == numa.end() ? std::vector<int64_t>{} : it->second});
  }
  return held;
}

}  // namespace

FakeKubelet::FakeKubelet(FakeKubeletOptions options) : options_(std::move(options)) {
  adapters::kubelet::KeepGrpcInitialized();
  pod_resources_.SetAllocatableSource([this] { return AllocatableDevices(); });
}

FakeKubelet::~FakeKubelet() { Stop(); }

std::filesystem::path FakeKubelet::kubelet_socket() const {
  return options_.device_plugin_dir / "kubelet.sock";
}

Status FakeKubelet::Start() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    if (serving_) return FailedPrecondition("fake kubelet is already running");
  }
  return StartServersLocked();
}

Status FakeKubelet::Restart() {
  std::lock_guard lifecycle(lifecycle_mu_);
  StopServersLocked();
  for (const auto& endpoint : DisconnectAll()) endpoint->Stop();
  // What a starting kubelet does to its device-plugin directory (CleanupPluginDirectory).
  auto removed = RemoveSocketsIn(options_.device_plugin_dir);
  if (!removed.ok()) return removed.status().WithContext("restarting fake kubelet");
  return StartServersLocked();
}

void FakeKubelet::Stop() {
  std::lock_guard lifecycle(lifecycle_mu_);
  StopServersLocked();
  for (const auto& endpoint : DisconnectAll()) endpoint->Stop();
}

Status FakeKubelet::StartServersLocked() {
  std::error_code ec;
  std::filesystem::create_directories(options_.device_plugin_dir, ec);
  if (ec) {
    return Internal("creating device-plugin directory " + options_.device_plugin_dir.string() +
                    ": " + ec.message());
  }
  auto service = std::make_unique<RegistrationService>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(adapters::kubelet::UnixSocketTarget(kubelet_socket().string()),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return Unavailable("fake kubelet cannot listen on " + kubelet_socket().string());
  }
  Status pod_resources = pod_resources_.Start(options_.pod_resources_socket);
  if (!pod_resources.ok()) {
    server->Shutdown();
    server->Wait();
    return pod_resources.WithContext("starting fake kubelet");
  }
  registration_service_ = std::move(service);
  registration_server_ = std::move(server);
  std::lock_guard lock(mu_);
  serving_ = true;
  return Status::Ok();
}

void FakeKubelet::StopServersLocked() {
  {
    std::lock_guard lock(mu_);
    serving_ = false;
    ++epoch_;
  }
  if (registration_server_ != nullptr) {
    // Cancels in-flight Register calls; their dial loops notice and return.
    registration_server_->Shutdown(std::chrono::system_clock::now() +
                                   std::chrono::milliseconds(200));
    registration_server_->Wait();
    registration_server_.reset();
    registration_service_.reset();
  }
  pod_resources_.Stop();
}

std::vector<std::shared_ptr<PluginEndpoint>> FakeKubelet::DisconnectAll() {
  std::vector<std::shared_ptr<PluginEndpoint>> endpoints;
  std::lock_guard lock(mu_);
  ++epoch_;
  for (auto& [name, state] : resources_) {
    if (state.endpoint != nullptr) endpoints.push_back(std::move(state.endpoint));
    state.endpoint.reset();
    state.endpoint_generation = 0;
    state.snapshot.connected = false;
  }
  changed_.notify_all();
  return endpoints;
}

grpc::Status FakeKubelet::HandleRegister(grpc::ServerContext* context,
                                         const v1beta1::RegisterRequest& request) {
  auto answer = [&](grpc::Status status) {
    std::lock_guard lock(mu_);
    registration_log_.push_back({request, status});
    changed_.notify_all();
    return status;
  };
  // The kubelet reports these as plain Go errors, i.e. gRPC UNKNOWN, with this wording.
  if (request.version() != kSupportedVersion) {
    return answer(grpc::Status(grpc::StatusCode::UNKNOWN,
                               "requested API version \"" + request.version() +
                                   "\" is not supported by kubelet. Supported version is "
                                   "[\"v1beta1\"]"));
  }
  if (!IsExtendedResourceName(request.resource_name())) {
    return answer(grpc::Status(grpc::StatusCode::UNKNOWN,
                               "the ResourceName \"" + request.resource_name() + "\" is invalid"));
  }
  uint64_t epoch = 0;
  {
    std::lock_guard lock(mu_);
    epoch = epoch_;
  }

  auto connected = PluginEndpoint::Connect(
      (options_.device_plugin_dir / request.endpoint()).string(), options_.dial_timeout,
      options_.options_timeout, [context] { return context->IsCancelled(); });
  if (!connected.ok()) return answer(connected.status);
  std::shared_ptr<PluginEndpoint> endpoint = std::move(connected.response);

  std::shared_ptr<PluginEndpoint> replaced;
  grpc::Status status = grpc::Status::OK;
  {
    std::lock_guard lock(mu_);
    if (!serving_ || epoch_ != epoch) {
      status = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            "kubelet stopped while registering " + request.resource_name());
    } else {
      const std::string& name = request.resource_name();
      ResourceState& state = resources_[name];
      // A new registration for the same resource replaces the old endpoint, as in the kubelet.
      replaced = std::move(state.endpoint);
      state.endpoint = endpoint;
      const uint64_t generation = next_generation_++;
      state.endpoint_generation = generation;
      ResourceSnapshot& snapshot = state.snapshot;
      snapshot.resource_name = name;
      snapshot.connected = true;
      ++snapshot.registrations;
      snapshot.endpoint = request.endpoint();
      snapshot.options = endpoint->options();
      registration_log_.push_back({request, status});
      // Started under the lock so that a concurrent Restart finds it running and stops it.
      endpoint->StartListAndWatch(
          [this, name, generation](const v1beta1::ListAndWatchResponse& response) {
            OnDevices(name, generation, response);
          },
          [this, name, generation](const grpc::Status& end) {
            OnStreamEnd(name, generation, end);
          });
      changed_.notify_all();
    }
  }
  if (replaced != nullptr) replaced->Stop();
  if (!status.ok()) {
    endpoint->Stop();
    return answer(status);
  }
  return status;
}

void FakeKubelet::OnDevices(const std::string& resource_name, uint64_t generation,
                            const v1beta1::ListAndWatchResponse& response) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(resource_name);
  if (it == resources_.end() || it->second.endpoint_generation != generation) return;
  ResourceSnapshot& snapshot = it->second.snapshot;
  snapshot.devices.assign(response.devices().begin(), response.devices().end());
  ++snapshot.updates;
  changed_.notify_all();
}

void FakeKubelet::OnStreamEnd(const std::string& resource_name, uint64_t generation,
                              const grpc::Status& status) {
  std::lock_guard lock(mu_);
  auto it = resources_.find(resource_name);
  if (it == resources_.end() || it->second.endpoint_generation != generation) return;
  // Like the kubelet: the resource's devices are unusable until the plugin registers again.
  // The endpoint object stays until then (it cannot be destroyed on its own reader thread).
  ResourceSnapshot& snapshot = it->second.snapshot;
  snapshot.connected = false;
  ++snapshot.stream_ends;
  snapshot.last_stream_end = status;
  changed_.notify_all();
}

std::vector<RegistrationAttempt> FakeKubelet::RegistrationLog() const {
  std::lock_guard lock(mu_);
  return registration_log_;
}

std::optional<ResourceSnapshot> FakeKubelet::Resource(const std::string& resource_name) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(resource_name);
  if (it == resources_.end()) return std::nullopt;
  return it->second.snapshot;
}

bool FakeKubelet::WaitForResource(const std::string& resource_name,
                                  const std::function<bool(const ResourceSnapshot&)>& predicate,
                                  std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] {
    auto it = resources_.find(resource_name);
    return it != resources_.end() && predicate(it->second.snapshot);
  });
}

bool FakeKubelet::WaitForDevices(
    const std::string& resource_name,
    const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
    std::chrono::milliseconds timeout) const {
  return WaitForResource(
      resource_name,
      [&](const ResourceSnapshot& snapshot) {
        return snapshot.connected && predicate(snapshot.devices);
      },
      timeout);
}

std::shared_ptr<PluginEndpoint> FakeKubelet::ConnectedEndpoint(
    const std::string& resource_name) const {
  std::lock_guard lock(mu_);
  auto it = resources_.find(resource_name);
  if (it == resources_.end() || !it->second.snapshot.connected) return nullptr;
  return it->second.endpoint;
}

namespace {
grpc::Status NotConnected(const std::string& resource_name) {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "no device plugin is connected for resource " + resource_name);
}
}  // namespace

RpcOutcome<v1beta1::PreferredAllocationResponse> FakeKubelet::GetPreferredAllocation(
    const std::string& resource_name, const v1beta1::PreferredAllocationRequest& request) {
  auto endpoint = ConnectedEndpoint(resource_name);
  if (endpoint == nullptr) return {NotConnected(resource_name), {}};
  return endpoint->GetPreferredAllocation(request, options_.call_timeout);
}

RpcOutcome<v1beta1::AllocateResponse> FakeKubelet::Allocate(
    const std::string& resource_name, const v1beta1::AllocateRequest& request) {
  auto endpoint = ConnectedEndpoint(resource_name);
  if (endpoint == nullptr) return {NotConnected(resource_name), {}};
  return endpoint->Allocate(request, options_.call_timeout);
}

RpcOutcome<v1beta1::PreStartContainerResponse> FakeKubelet::PreStartContainer(
    const std::string& resource_name, const v1beta1::PreStartContainerRequest& request) {
  auto endpoint = ConnectedEndpoint(resource_name);
  if (endpoint == nullptr) return {NotConnected(resource_name), {}};
  return endpoint->PreStartContainer(request, options_.prestart_timeout);
}

RpcOutcome<AdmittedPod> FakeKubelet::AdmitPod(const std::string& pod_namespace,
                                              const std::string& pod_name,
                                              const std::vector<ContainerRequest>& containers,
                                              const std::string& resource_name) {
  std::lock_guard admission(admission_mu_);
  return AdmitPodLocked(pod_namespace, pod_name, containers, resource_name);
}

RpcOutcome<AdmittedPod> FakeKubelet::AdmitPodLocked(const std::string& pod_namespace,
                                                    const std::string& pod_name,
                                                    const std::vector<ContainerRequest>& containers,
                                                    const std::string& resource_name) {
  RpcOutcome<AdmittedPod> out;
  auto fail = [&out](grpc::Status status) {
    out.status = std::move(status);
    return out;
  };
  const std::string key = PodKey(pod_namespace, pod_name);

  std::shared_ptr<PluginEndpoint> endpoint;
  v1beta1::DevicePluginOptions plugin_options;
  std::vector<std::string> available;  // healthy and not held, in the plugin's order
  std::map<std::string, std::vector<int64_t>> numa;
  {
    std::lock_guard lock(mu_);
    if (pods_.contains(key)) {
      return fail({grpc::StatusCode::ALREADY_EXISTS, "pod " + key + " is already admitted"});
    }
    auto it = resources_.find(resource_name);
    if (it == resources_.end() || !it->second.snapshot.connected) {
      return fail({grpc::StatusCode::FAILED_PRECONDITION,
                   "cannot allocate unregistered device " + resource_name});
    }
    endpoint = it->second.endpoint;
    plugin_options = it->second.snapshot.options;
    std::set<std::string> held;
    for (const auto& [pod_key, pod] : pods_) {
      if (pod.resource_name != resource_name) continue;
      for (const AdmittedContainer& c : pod.containers)
        held.insert(c.device_ids.begin(), c.device_ids.end());
    }
    for (const v1beta1::Device& device : it->second.snapshot.devices) {
      for (const v1beta1::NUMANode& node : device.topology().nodes()) {
        numa[device.id()].push_back(node.id());
      }
      if (device.health() == kHealthy && !held.contains(device.id()))
        available.push_back(device.id());
    }
  }

  AdmittedPod pod{pod_namespace, pod_name, resource_name, {}};
  for (const ContainerRequest& request : containers) {
    AdmittedContainer admitted{request.name, {}, {}};
    if (request.count <= 0) {  // the kubelet does not call the plugin for such containers
      pod.containers.push_back(std::move(admitted));
      continue;
    }
    const auto count = static_cast<size_t>(request.count);
    if (count > available.size()) {
      return fail({grpc::StatusCode::RESOURCE_EXHAUSTED,
                   "requested number of devices unavailable for " + resource_name +
                       ". Requested: " + std::to_string(count) +
                       ", Available: " + std::to_string(available.size())});
    }

    std::vector<std::string> preferred;
    bool have_advice = false;
    if (plugin_options.get_preferred_allocation_available()) {
      v1beta1::PreferredAllocationRequest ask;
      v1beta1::ContainerPreferredAllocationRequest* container = ask.add_container_requests();
      for (const std::string& id : available) container->add_available_deviceids(id);
      container->set_allocation_size(request.count);
      auto advice = endpoint->GetPreferredAllocation(ask, options_.call_timeout);
      if (!advice.ok()) return fail(advice.status);
      if (advice.response.container_responses_size() > 0) {
        const auto& ids = advice.response.container_responses(0).deviceids();
        preferred.assign(ids.begin(), ids.end());
        have_advice = true;
      }
    }
    admitted.device_ids = ChooseDevices(available, count, have_advice ? &preferred : nullptr);

    // One Allocate per container, with exactly one container request, like the kubelet.
    v1beta1::AllocateRequest allocate;
    v1beta1::ContainerAllocateRequest* container_request = allocate.add_container_requests();
    for (const std::string& id : admitted.device_ids) container_request->add_devices_ids(id);
    auto allocated = endpoint->Allocate(allocate, options_.call_timeout);
    if (!allocated.ok()) return fail(allocated.status);
    if (allocated.response.container_responses_size() == 0) {
      return fail({grpc::StatusCode::UNKNOWN,
                   "no containers return in allocation response for " + resource_name});
    }
    admitted.allocate_response = allocated.response.container_responses(0);

    if (plugin_options.pre_start_required()) {
      v1beta1::PreStartContainerRequest prestart;
      for (const std::string& id : admitted.device_ids) prestart.add_devices_ids(id);
      auto started = endpoint->PreStartContainer(prestart, options_.prestart_timeout);
      if (!started.ok()) return fail(started.status);
    }

    std::erase_if(available, [&](const std::string& id) {
      return std::find(admitted.device_ids.begin(), admitted.device_ids.end(), id) !=
             admitted.device_ids.end();
    });
    pod.containers.push_back(std::move(admitted));
  }

  std::vector<HeldContainer> held;
  for (const AdmittedContainer& c : pod.containers) {
    held.push_back({c.name, resource_name, HeldDevicesOf(c.device_ids, numa)});
  }
  {
    std::lock_guard lock(mu_);
    pods_[key] = pod;
  }
  pod_resources_.SetPod(BuildPodResources(pod_namespace, pod_name, held));
  out.response = std::move(pod);
  return out;
}

bool FakeKubelet::DeletePod(const std::string& pod_namespace, const std::string& pod_name) {
  std::lock_guard admission(admission_mu_);
  {
    std::lock_guard lock(mu_);
    if (pods_.erase(PodKey(pod_namespace, pod_name)) == 0) return false;
  }
  pod_resources_.RemovePod(pod_namespace, pod_name);
  return true;
}

std::vector<AdmittedPod> FakeKubelet::Pods() const {
  std::lock_guard lock(mu_);
  std::vector<AdmittedPod> out;
  for (const auto& [key, pod] : pods_) out.push_back(pod);
  return out;
}

std::vector<std::string> FakeKubelet::AllocatedDevices(const std::string& resource_name) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, pod] : pods_) {
    if (pod.resource_name != resource_name) continue;
    for (const AdmittedContainer& c : pod.containers) {
      out.insert(out.end(), c.device_ids.begin(), c.device_ids.end());
    }
  }
  return out;
}

std::vector<v1::ContainerDevices> FakeKubelet::AllocatableDevices() const {
  google::protobuf::RepeatedPtrField<v1::ContainerDevices> entries;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, state] : resources_) {
      if (!state.snapshot.connected) continue;
      std::vector<HeldDevice> healthy;
      for (const v1beta1::Device& device : state.snapshot.devices) {
        if (device.health() != kHealthy) continue;
        HeldDevice held{device.id(), {}};
        for (const v1beta1::NUMANode& node : device.topology().nodes()) {
          held.numa_nodes.push_back(node.id());
        }
        healthy.push_back(std::move(held));
      }
      AppendContainerDevices(name, healthy, &entries);
    }
  }
  return {entries.begin(), entries.end()};
}

}  // namespace gfp::kubelet
