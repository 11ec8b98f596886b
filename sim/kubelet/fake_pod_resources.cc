#include "sim/kubelet/fake_pod_resources.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include <optional>
#include <thread>

#include "adapters/kubelet/grpc_lifetime.h"
#include "adapters/kubelet/unix_channel.h"
#include "podresources/v1/api.grpc.pb.h"

namespace gfp::kubelet {
namespace {

std::string PodKey(const std::string& pod_namespace, const std::string& pod_name) {
  return pod_namespace + "/" + pod_name;
}

// Thin gRPC adapter; a fresh one per Start() because a service object belongs to one server.
class PodResourcesService final : public v1::PodResourcesLister::Service {
 public:
  explicit PodResourcesService(FakePodResources* state) : state_(state) {}

  grpc::Status List(grpc::ServerContext* context, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    return state_->HandleList(context, response);
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* response) override {
    return state_->HandleGetAllocatable(response);
  }
  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* request,
                   v1::GetPodResourcesResponse* response) override {
    return state_->HandleGet(*request, response);
  }

 private:
  FakePodResources* state_;
};

// A pod whose only purpose is size: device IDs of another resource, 1 KiB each.
v1::PodResources FillerPod(size_t bytes) {
  v1::PodResources pod;
  pod.set_namespace_("gfp-fake-kubelet");
  pod.set_name("oversize-filler");
  v1::ContainerDevices* devices = pod.add_containers()->add_devices();
  devices->set_resource_name("example.com/filler");
  const std::string id(1024, 'x');
  for (size_t total = 0; total < bytes; total += id.size() + 3) devices->add_device_ids(id);
  return pod;
}

}  // namespace

FakePodResources::FakePodResources() { adapters::kubelet::KeepGrpcInitialized(); }

FakePodResources::~FakePodResources() { Stop(); }

Status FakePodResources::Start(const std::filesystem::path& socket_path) {
  std::lock_guard lock(server_mu_);
  if (server_ != nullptr) return FailedPrecondition("fake PodResources server is already running");
  std::error_code ec;
  std::filesystem::create_directories(socket_path.parent_path(), ec);
  if (ec) {
    return Internal("creating PodResources directory " + socket_path.parent_path().string() + ": " +
                    ec.message());
  }
  auto service = std::make_unique<PodResourcesService>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(adapters::kubelet::UnixSocketTarget(socket_path.string()),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(service.get());
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return Unavailable("fake PodResources server cannot listen on " + socket_path.string());
  }
  service_ = std::move(service);
  server_ = std::move(server);
  return Status::Ok();
}

void FakePodResources::Stop() {
  std::lock_guard lock(server_mu_);
  if (server_ == nullptr) return;
  // In-flight delayed Lists notice the cancellation and return.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
  service_.reset();
}

bool FakePodResources::running() const {
  std::lock_guard lock(server_mu_);
  return server_ != nullptr;
}

void FakePodResources::SetPod(v1::PodResources pod) {
  std::lock_guard lock(mu_);
  const std::string key = PodKey(pod.namespace_(), pod.name());
  pods_[key] = std::move(pod);
}

bool FakePodResources::RemovePod(const std::string& pod_namespace, const std::string& pod_name) {
  std::lock_guard lock(mu_);
  return pods_.erase(PodKey(pod_namespace, pod_name)) > 0;
}

void FakePodResources::ClearPods() {
  std::lock_guard lock(mu_);
  pods_.clear();
}

std::vector<v1::PodResources> FakePodResources::Pods() const {
  std::lock_guard lock(mu_);
  std::vector<v1::PodResources> out;
  for (const auto& [key, pod] : pods_) out.push_back(pod);
  return out;
}

void FakePodResources::SetAllocatableSource(AllocatableSource source) {
  std::lock_guard lock(mu_);
  allocatable_ = std::move(source);
}

void FakePodResources::FailNextList(grpc::StatusCode code, std::string message, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) {
    list_faults_.push_back({ListFault::Kind::kFail, code, message, 0, {}});
  }
}

void FakePodResources::OversizeNextList(int times, size_t bytes) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) {
    list_faults_.push_back({ListFault::Kind::kOversize, grpc::StatusCode::OK, {}, bytes, {}});
  }
}

void FakePodResources::DelayNextList(std::chrono::milliseconds delay, int times) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < times; ++i) {
    list_faults_.push_back({ListFault::Kind::kDelay, grpc::StatusCode::OK, {}, 0, delay});
  }
}

int FakePodResources::list_calls() const {
  std::lock_guard lock(mu_);
  return list_calls_;
}

grpc::Status FakePodResources::HandleList(grpc::ServerContext* context,
                                          v1::ListPodResourcesResponse* response) {
  std::optional<ListFault> fault;
  {
    std::lock_guard lock(mu_);
    ++list_calls_;
    if (!list_faults_.empty()) {
      fault = list_faults_.front();
      list_faults_.pop_front();
    }
    for (const auto& [key, pod] : pods_) *response->add_pod_resources() = pod;
  }
  if (!fault.has_value()) return grpc::Status::OK;
  switch (fault->kind) {
    case ListFault::Kind::kFail:
      response->Clear();
      return grpc::Status(fault->code, fault->message);
    case ListFault::Kind::kOversize:
      *response->add_pod_resources() = FillerPod(fault->bytes);
      return grpc::Status::OK;
    case ListFault::Kind::kDelay: {
      // Sleep in slices so that a shutting-down server is not held up.
      const auto until = std::chrono::steady_clock::now() + fault->delay;
      while (std::chrono::steady_clock::now() < until && !context->IsCancelled()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return grpc::Status::OK;
    }
  }
  return grpc::Status::OK;
}

grpc::Status FakePodResources::HandleGet(const v1::GetPodResourcesRequest& request,
                                         v1::GetPodResourcesResponse* response) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(PodKey(request.pod_namespace(), request.pod_name()));
  if (it == pods_.end()) {
    // The kubelet returns a plain Go error, which gRPC reports as UNKNOWN.
    return grpc::Status(grpc::StatusCode::UNKNOWN, "pod " + request.pod_name() + " in namespace " +
                                                       request.pod_namespace() + " not found");
  }
  *response->mutable_pod_resources() = it->second;
  return grpc::Status::OK;
}

grpc::Status FakePodResources::HandleGetAllocatable(v1::AllocatableResourcesResponse* response) {
  AllocatableSource source;
  {
    std::lock_guard lock(mu_);
    source = allocatable_;
  }
  if (source) {
    for (v1::ContainerDevices& devices : source()) *response->add_devices() = std::move(devices);
  }
  return grpc::Status::OK;
}

}  // namespace gfp::kubelet
