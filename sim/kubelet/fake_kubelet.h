// A fake kubelet for tests and the demo: the device-manager side of the kubelet over real gRPC on
// Unix sockets, plus its PodResources API.
//
// - Registration server on <device_plugin_dir>/kubelet.sock. Like kubelet >= 1.25, Register
//   checks the version ("v1beta1") and the resource name, dials <device_plugin_dir>/<endpoint>
//   and calls GetDevicePluginOptions *during* the Register call, then reads ListAndWatch in the
//   background, keeping the latest device list per resource.
// - The calls the kubelet makes to a plugin (GetPreferredAllocation, Allocate, PreStartContainer).
// - Pod admission bookkeeping (AdmitPod / DeletePod) that picks devices like the kubelet and
//   publishes admitted pods through PodResources.
// - Restart(): the kubelet's restart as a plugin sees it: every socket in the device-plugin dir
//   removed, kubelet.sock re-created, no plugin connected until it registers again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "deviceplugin/v1beta1/api.pb.h"
#include "sim/kubelet/fake_pod_resources.h"
#include "sim/kubelet/rpc_outcome.h"

namespace grpc {
class Server;
class ServerContext;
class Service;
}  // namespace grpc

namespace gfp::kubelet {

class PluginEndpoint;

struct FakeKubeletOptions {
  std::filesystem::path device_plugin_dir;     // holds kubelet.sock and the plugins' sockets
  std::filesystem::path pod_resources_socket;  // the PodResources API socket
  // The kubelet's blocking dial of a registering plugin.
  std::chrono::milliseconds dial_timeout{10'000};
  // The kubelet has no deadline for these; bounded here so a broken plugin cannot hang a test.
  std::chrono::milliseconds options_timeout{10'000};
  std::chrono::milliseconds call_timeout{60'000};      // GetPreferredAllocation, Allocate
  std::chrono::milliseconds prestart_timeout{30'000};  // the kubelet's PreStartContainer deadline
};

// What the fake kubelet knows about one resource name.
struct ResourceSnapshot {
  std::string resource_name;
  bool connected = false;                // registered, and its ListAndWatch stream is open
  int registrations = 0;                 // successful registrations so far
  std::string endpoint;                  // from the latest successful registration
  v1beta1::DevicePluginOptions options;  // from GetDevicePluginOptions during registration
  std::vector<v1beta1::Device> devices;  // the latest ListAndWatch list
  int updates = 0;                       // ListAndWatch messages received, over all registrations
  int stream_ends = 0;                   // ListAndWatch streams that ended while connected
  grpc::Status last_stream_end;
};

// One Register call and how the fake kubelet answered it.
struct RegistrationAttempt {
  v1beta1::RegisterRequest request;
  grpc::Status status;
};

struct ContainerRequest {
  std::string name;
  int count = 0;  // devices of the pod's resource
};

struct AdmittedContainer {
  std::string name;
  std::vector<std::string> device_ids;  // in the order sent to Allocate
  v1beta1::ContainerAllocateResponse allocate_response;
};

struct AdmittedPod {
  std::string pod_namespace;
  std::string pod_name;
  std::string resource_name;
  std::vector<AdmittedContainer> containers;
};

class FakeKubelet {
 public:
  explicit FakeKubelet(FakeKubeletOptions options);
  ~FakeKubelet();  // Stop()
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // Creates the directories and serves kubelet.sock and the PodResources socket.
  Status Start();
  // Stops serving and disconnects every plugin, then removes every socket in the device-plugin
  // dir and serves a fresh kubelet.sock and PodResources socket. Admitted pods are kept (the
  // kubelet restores them from its checkpoint).
  Status Restart();
  // Stops serving and disconnects every plugin. Idempotent.
  void Stop();

  std::filesystem::path kubelet_socket() const;
  const FakeKubeletOptions& options() const { return options_; }

  // --- registrations and devices ---
  std::vector<RegistrationAttempt> RegistrationLog() const;
  std::optional<ResourceSnapshot> Resource(const std::string& resource_name) const;
  // Waits until `predicate` holds for the resource (which must be known, i.e. registered once).
  bool WaitForResource(const std::string& resource_name,
                       const std::function<bool(const ResourceSnapshot&)>& predicate,
                       std::chrono::milliseconds timeout) const;
  // Waits until the resource is connected and its latest device list satisfies `predicate`.
  bool WaitForDevices(const std::string& resource_name,
                      const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
                      std::chrono::milliseconds timeout) const;

  // --- the calls the kubelet makes to a registered plugin ---
  // A resource without a connected plugin answers FAILED_PRECONDITION.
  RpcOutcome<v1beta1::PreferredAllocationResponse> GetPreferredAllocation(
      const std::string& resource_name, const v1beta1::PreferredAllocationRequest& request);
  RpcOutcome<v1beta1::AllocateResponse> Allocate(const std::string& resource_name,
                                                 const v1beta1::AllocateRequest& request);
  RpcOutcome<v1beta1::PreStartContainerResponse> PreStartContainer(
      const std::string& resource_name, const v1beta1::PreStartContainerRequest& request);

  // --- pod admission ---
  // Admits a pod whose containers each request `count` devices of `resource_name`, container by
  // container, like the kubelet: available = healthy devices not held by any pod; ask
  // GetPreferredAllocation when the plugin offers it (its error fails the pod), keep only the
  // valid part of the answer and fill up with the first available devices; Allocate; then
  // PreStartContainer when the plugin requires it. On success the pod appears in PodResources.
  // On failure the status is returned and nothing is recorded.
  RpcOutcome<AdmittedPod> AdmitPod(const std::string& pod_namespace, const std::string& pod_name,
                                   const std::vector<ContainerRequest>& containers,
                                   const std::string& resource_name);
  // Forgets the pod and frees its devices; false if unknown.
  bool DeletePod(const std::string& pod_namespace, const std::string& pod_name);
  std::vector<AdmittedPod> Pods() const;
  // Devices of `resource_name` held by admitted pods.
  std::vector<std::string> AllocatedDevices(const std::string& resource_name) const;

  // The PodResources API state: set pods directly, inject faults.
  FakePodResources& pod_resources() { return pod_resources_; }

  // Called by the registration service; public only for it.
  grpc::Status HandleRegister(grpc::ServerContext* context,
                              const v1beta1::RegisterRequest& request);

 private:
  struct ResourceState {
    ResourceSnapshot snapshot;
    std::shared_ptr<PluginEndpoint> endpoint;
    uint64_t endpoint_generation = 0;
  };

  Status StartServersLocked();
  void StopServersLocked();
  std::vector<std::shared_ptr<PluginEndpoint>> DisconnectAll();
  std::shared_ptr<PluginEndpoint> ConnectedEndpoint(const std::string& resource_name) const;
  void OnDevices(const std::string& resource_name, uint64_t generation,
                 const v1beta1::ListAndWatchResponse& response);
  void OnStreamEnd(const std::string& resource_name, uint64_t generation,
                   const grpc::Status& status);
  std::vector<v1::ContainerDevices> AllocatableDevices() const;
  RpcOutcome<AdmittedPod> AdmitPodLocked(const std::string& pod_namespace,
                                         const std::string& pod_name,
                                         const std::vector<ContainerRequest>& containers,
                                         const std::string& resource_name);

  const FakeKubeletOptions options_;

  mutable std::mutex mu_;  // guards the state below
  mutable std::condition_variable changed_;
  std::map<std::string, ResourceState> resources_;
  std::vector<RegistrationAttempt> registration_log_;
  std::map<std::string, AdmittedPod> pods_;  // key: namespace/name
  uint64_t next_generation_ = 1;
  uint64_t epoch_ = 0;  // bumped by Stop/Restart so that in-flight registrations are discarded
  bool serving_ = false;

  std::mutex lifecycle_mu_;  // serializes Start/Restart/Stop
  std::unique_ptr<grpc::Service> registration_service_;
  std::unique_ptr<grpc::Server> registration_server_;

  std::mutex admission_mu_;  // the kubelet admits one pod at a time
  FakePodResources pod_resources_;
};

}  // namespace gfp::kubelet
