// Client of the kubelet PodResources API (v1.PodResourcesLister/List) over its Unix socket.
//
// Built for periodic reconciliation: each List is bounded by a deadline, the receive limit is
// raised above gRPC's 4 MiB default (big nodes list many pods), and the channel is recreated
// when the socket file is replaced (kubelet restart: new inode, or a reused inode number with a
// new change time) or after any failed call, so a
// restarted kubelet is seen on the next poll instead of after gRPC's reconnect backoff.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "adapters/kubelet/pod_device_assignment.h"
#include "common/status.h"

namespace grpc {
class Channel;
}  // namespace grpc

namespace gfp::adapters::kubelet {

struct PodResourcesClientOptions {
  std::string socket_path = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::chrono::milliseconds deadline{10'000};
  int max_receive_bytes = 16 * 1024 * 1024;
};

class PodResourcesClient {
 public:
  explicit PodResourcesClient(PodResourcesClientOptions options);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Every container's devices, flattened (see FlattenPodResources). Fails with kUnavailable when
  // the socket is missing or the kubelet does not answer, kDeadlineExceeded after the deadline,
  // kResourceExhausted when the answer exceeds the receive limit or the kubelet rate-limits us.
  // Thread-safe; calls are serialized.
  Result<std::vector<ContainerDeviceAssignment>> List();

  // How many channels have been created so far (observability for tests and logs).
  int channels_created() const;

 private:
  Status EnsureChannelLocked();

  const PodResourcesClientOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<grpc::Channel> channel_;
  // Identity of the socket file the channel was made for.
  dev_t socket_dev_ = 0;
  ino_t socket_ino_ = 0;
  struct timespec socket_ctime_ {};
  int channels_created_ = 0;
};

}  // namespace gfp::adapters::kubelet
