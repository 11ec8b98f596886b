#include "unit/kubelet/test_device_plugin.h"

#include <grpcpp/client_context.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>

#include "adapters/kubelet/grpc_lifetime.h"
#include "adapters/kubelet/unix_channel.h"

namespace gfp::kubelet::testing {

v1beta1::Device MakeDevice(const std::string& id, const std::string& health, int64_t numa_node) {
  v1beta1::Device device;
  device.set_id(id);
  device.set_health(health);
  device.mutable_topology()->add_nodes()->set_id(numa_node);
  return device;
}

class TestDevicePlugin::Service final : public v1beta1::DevicePlugin::Service {
 public:
  explicit Service(TestDevicePlugin* plugin) : p_(plugin) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* response) override {
    ++p_->options_calls_;
    if (p_->registering_) ++p_->options_calls_during_register_;
    *response = p_->options_;
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    std::unique_lock lock(p_->mu_);
    ++p_->open_streams_;
    p_->changed_.notify_all();
    const uint64_t end_generation = p_->end_streams_generation_;
    uint64_t sent_version = 0;
    while (!p_->stopping_ && !context->IsCancelled() &&
           p_->end_streams_generation_ == end_generation) {
      if (sent_version != p_->devices_version_) {
        v1beta1::ListAndWatchResponse response;
        for (const auto& device : p_->devices_) *response.add_devices() = device;
        sent_version = p_->devices_version_;
        lock.unlock();
        const bool written = writer->Write(response);
        lock.lock();
        if (!written) break;
      }
      p_->changed_.wait_for(lock, std::chrono::milliseconds(10));
    }
    --p_->open_streams_;
    p_->changed_.notify_all();
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override {
    PreferredHandler handler;
    {
      std::lock_guard lock(p_->mu_);
      p_->preferred_requests_.push_back(*request);
      handler = p_->preferred_;
    }
    if (handler) return handler(*request, response);
    // Default advice: the first allocation_size available devices.
    for (const auto& container : request->container_requests()) {
      auto* answer = response->add_container_responses();
      for (int i = 0; i < container.allocation_size() && i < container.available_deviceids_size();
           ++i) {
        answer->add_deviceids(container.available_deviceids(i));
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override {
    AllocateHandler handler;
    {
      std::lock_guard lock(p_->mu_);
      p_->allocate_requests_.push_back(*request);
      handler = p_->allocate_;
    }
    if (handler) return handler(*request, response);
    for (const auto& container : request->container_requests()) {
      std::string joined;
      for (const auto& id : container.devices_ids()) joined += (joined.empty() ? "" : ",") + id;
      (*response->add_container_responses()->mutable_envs())["PCI_RESOURCE_TEST"] = joined;
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse*) override {
    PreStartHandler handler;
    {
      std::lock_guard lock(p_->mu_);
      p_->prestart_requests_.push_back(*request);
      handler = p_->prestart_;
    }
    return handler ? handler(*request) : grpc::Status::OK;
  }

 private:
  TestDevicePlugin* p_;
};

TestDevicePlugin::TestDevicePlugin(std::filesystem::path device_plugin_dir, std::string endpoint,
                                   std::string resource_name, v1beta1::DevicePluginOptions options)
    : dir_(std::move(device_plugin_dir)),
      endpoint_(std::move(endpoint)),
      resource_name_(std::move(resource_name)),
      options_(std::move(options)) {
  adapters::kubelet::KeepGrpcInitialized();
}

TestDevicePlugin::~TestDevicePlugin() { StopServing(); }

bool TestDevicePlugin::Serve() {
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  service_ = std::make_unique<Service>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(adapters::kubelet::UnixSocketTarget(socket_path().string()),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  return server_ != nullptr;
}

void TestDevicePlugin::StopServing() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    server_->Wait();
    server_.reset();
  }
  service_.reset();
}

void TestDevicePlugin::EndStreams() {
  std::lock_guard lock(mu_);
  ++end_streams_generation_;
  changed_.notify_all();
}

grpc::Status TestDevicePlugin::Register(const std::string& version) {
  return RegisterAs(version, resource_name_);
}

grpc::Status TestDevicePlugin::RegisterAs(const std::string& version,
                                          const std::string& resource_name) {
  auto channel = adapters::kubelet::MakeUnixSocketChannel((dir_ / "kubelet.sock").string());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(version);
  request.set_endpoint(endpoint_);
  request.set_resource_name(resource_name);
  *request.mutable_options() = options_;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(15));
  v1beta1::Empty empty;
  registering_ = true;
  grpc::Status status = stub->Register(&context, request, &empty);
  registering_ = false;
  return status;
}

void TestDevicePlugin::SetDevices(std::vector<v1beta1::Device> devices) {
  std::lock_guard lock(mu_);
  devices_ = std::move(devices);
  ++devices_version_;
  changed_.notify_all();
}

void TestDevicePlugin::set_preferred_handler(PreferredHandler h) {
  std::lock_guard lock(mu_);
  preferred_ = std::move(h);
}
void TestDevicePlugin::set_allocate_handler(AllocateHandler h) {
  std::lock_guard lock(mu_);
  allocate_ = std::move(h);
}
void TestDevicePlugin::set_prestart_handler(PreStartHandler h) {
  std::lock_guard lock(mu_);
  prestart_ = std::move(h);
}

int TestDevicePlugin::open_streams() const {
  std::lock_guard lock(mu_);
  return open_streams_;
}

bool TestDevicePlugin::WaitForOpenStreams(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return open_streams_ == n; });
}

std::vector<v1beta1::PreferredAllocationRequest> TestDevicePlugin::preferred_requests() const {
  std::lock_guard lock(mu_);
  return preferred_requests_;
}
std::vector<v1beta1::AllocateRequest> TestDevicePlugin::allocate_requests() const {
  std::lock_guard lock(mu_);
  return allocate_requests_;
}
std::vector<v1beta1::PreStartContainerRequest> TestDevicePlugin::prestart_requests() const {
  std::lock_guard lock(mu_);
  return prestart_requests_;
}

}  // namespace gfp::kubelet::testing
