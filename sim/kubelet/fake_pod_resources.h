// The kubelet's PodResources API (v1.PodResourcesLister: List, GetAllocatableResources, Get) on
// its own Unix socket, with a pod list the test controls and injectable faults.
//
// The pod list and faults live in this object and survive Stop()/Start(), the way a restarted
// kubelet recovers its pods from its checkpoint.
#pragma once

#include <grpcpp/server.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "podresources/v1/api.pb.h"

namespace gfp::kubelet {

class FakePodResources {
 public:
  // Returns the healthy devices to report from GetAllocatableResources.
  using AllocatableSource = std::function<std::vector<v1::ContainerDevices>()>;

  FakePodResources();
  ~FakePodResources();  // Stop()
  FakePodResources(const FakePodResources&) = delete;
  FakePodResources& operator=(const FakePodResources&) = delete;

  // Serves on `socket_path` (a stale socket there is replaced, as the kubelet does).
  Status Start(const std::filesystem::path& socket_path);
  // Stops serving; gRPC removes the socket file. Idempotent.
  void Stop();
  bool running() const;

  // Adds the pod, or replaces the one with the same namespace and name.
  void SetPod(v1::PodResources pod);
  bool RemovePod(const std::string& pod_namespace, const std::string& pod_name);
  void ClearPods();
  std::vector<v1::PodResources> Pods() const;
  void SetAllocatableSource(AllocatableSource source);

  // Fault injection. Faults queue up in the order injected; each List call consumes one.
  // `times` List calls fail with `code` and `message`.
  void FailNextList(grpc::StatusCode code, std::string message, int times = 1);
  // `times` List calls answer with the real pods plus a filler pod so that the response is at
  // least `bytes` long (default: just over the kubelet clients' 16 MiB receive limit).
  void OversizeNextList(int times = 1, size_t bytes = (16u << 20) + 4096);
  // `times` List calls wait `delay` before answering normally (to exercise client deadlines).
  void DelayNextList(std::chrono::milliseconds delay, int times = 1);

  int list_calls() const;

  // The service implementation calls these; they are public only for it.
  grpc::Status HandleList(grpc::ServerContext* context, v1::ListPodResourcesResponse* response);
  grpc::Status HandleGet(const v1::GetPodResourcesRequest& request,
                         v1::GetPodResourcesResponse* response);
  grpc::Status HandleGetAllocatable(v1::AllocatableResourcesResponse* response);

 private:
  struct ListFault {
    enum class Kind { kFail, kOversize, kDelay } kind;
    grpc::StatusCode code = grpc::StatusCode::OK;
    std::string message;
    size_t bytes = 0;
    std::chrono::milliseconds delay{0};
  };

  mutable std::mutex mu_;
  std::map<std::string, v1::PodResources> pods_;  // key: namespace/name, so List is ordered
  AllocatableSource allocatable_;
  std::deque<ListFault> list_faults_;
  int list_calls_ = 0;

  mutable std::mutex server_mu_;  // serializes Start/Stop
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace gfp::kubelet
