// A tiny device plugin for the fake-kubelet tests: serves v1beta1.DevicePlugin on a Unix socket,
// registers with a kubelet, and records what the kubelet asked.
#pragma once

#include <grpcpp/server.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deviceplugin/v1beta1/api.grpc.pb.h"

namespace gfp::kubelet::testing {

// A device as a plugin advertises it: "Healthy" and on `numa_node`.
v1beta1::Device MakeDevice(const std::string& id, const std::string& health = "Healthy",
                           int64_t numa_node = 0);

class TestDevicePlugin {
 public:
  using PreferredHandler = std::function<grpc::Status(const v1beta1::PreferredAllocationRequest&,
                                                      v1beta1::PreferredAllocationResponse*)>;
  using AllocateHandler =
      std::function<grpc::Status(const v1beta1::AllocateRequest&, v1beta1::AllocateResponse*)>;
  using PreStartHandler = std::function<grpc::Status(const v1beta1::PreStartContainerRequest&)>;

  TestDevicePlugin(std::filesystem::path device_plugin_dir, std::string endpoint,
                   std::string resource_name, v1beta1::DevicePluginOptions options);
  ~TestDevicePlugin();

  // Serves <device_plugin_dir>/<endpoint>; false if gRPC cannot listen.
  bool Serve();
  // Ends every stream and stops serving (gRPC removes the socket).
  void StopServing();
  // Makes every open ListAndWatch stream return, as a misbehaving plugin would.
  void EndStreams();

  // Register on <device_plugin_dir>/kubelet.sock, optionally with another version or name.
  grpc::Status Register(const std::string& version = "v1beta1");
  grpc::Status RegisterAs(const std::string& version, const std::string& resource_name);

  // Replaces the device list and pushes it to every open stream.
  void SetDevices(std::vector<v1beta1::Device> devices);

  void set_preferred_handler(PreferredHandler h);
  void set_allocate_handler(AllocateHandler h);
  void set_prestart_handler(PreStartHandler h);

  std::filesystem::path socket_path() const { return dir_ / endpoint_; }
  const std::string& resource_name() const { return resource_name_; }
  const std::string& endpoint() const { return endpoint_; }

  // Observations.
  int options_calls() const { return options_calls_; }
  int options_calls_during_register() const { return options_calls_during_register_; }
  int open_streams() const;
  std::vector<v1beta1::PreferredAllocationRequest> preferred_requests() const;
  std::vector<v1beta1::AllocateRequest> allocate_requests() const;
  std::vector<v1beta1::PreStartContainerRequest> prestart_requests() const;
  // Waits until `open_streams() == n`.
  bool WaitForOpenStreams(int n, std::chrono::milliseconds timeout) const;

 private:
  class Service;
  friend class Service;

  const std::filesystem::path dir_;
  const std::string endpoint_;
  const std::string resource_name_;
  const v1beta1::DevicePluginOptions options_;

  std::atomic<int> options_calls_{0};
  std::atomic<int> options_calls_during_register_{0};
  std::atomic<bool> registering_{false};

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<v1beta1::Device> devices_;
  uint64_t devices_version_ = 1;
  uint64_t end_streams_generation_ = 0;
  bool stopping_ = false;
  int open_streams_ = 0;
  PreferredHandler preferred_;
  AllocateHandler allocate_;
  PreStartHandler prestart_;
  std::vector<v1beta1::PreferredAllocationRequest> preferred_requests_;
  std::vector<v1beta1::AllocateRequest> allocate_requests_;
  std::vector<v1beta1::PreStartContainerRequest> prestart_requests_;

  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace gfp::kubelet::testing
