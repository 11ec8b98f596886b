#include "adapters/kubelet/pod_resources_client.h"

#include <grpcpp/client_context.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "adapters/kubelet/grpc_lifetime.h"
#include "adapters/kubelet/grpc_status.h"
#include "adapters/kubelet/unix_channel.h"
#include "podresources/v1/api.grpc.pb.h"

namespace gfp::adapters::kubelet {

PodResourcesClient::PodResourcesClient(PodResourcesClientOptions options)
    : options_(std::move(options)) {
  KeepGrpcInitialized();
}

PodResourcesClient::~PodResourcesClient() = default;

int PodResourcesClient::channels_created() const {
  std::lock_guard lock(mu_);
  return channels_created_;
}

Status PodResourcesClient::EnsureChannelLocked() {
  struct stat st {};
  if (::stat(options_.socket_path.c_str(), &st) != 0) {
    const int err = errno;
    channel_.reset();
    return Unavailable("PodResources socket " + options_.socket_path +
                       " cannot be used: " + std::strerror(err));
  }
  // Another file means the kubelet re-created its socket: the old connection is dead.
  const bool replaced = st.st_dev != socket_dev_ || st.st_ino != socket_ino_ ||
                        st.st_ctim.tv_sec != socket_ctime_.tv_sec ||
                        st.st_ctim.tv_nsec != socket_ctime_.tv_nsec;
  if (channel_ == nullptr || replaced) {
    channel_ = MakeUnixSocketChannel(options_.socket_path, options_.max_receive_bytes);
    socket_dev_ = st.st_dev;
    socket_ino_ = st.st_ino;
    socket_ctime_ = st.st_ctim;
    ++channels_created_;
  }
  return Status::Ok();
}

Result<std::vector<ContainerDeviceAssignment>> PodResourcesClient::List() {
  std::lock_guard lock(mu_);
  GFP_RETURN_IF_ERROR(EnsureChannelLocked());

  auto stub = v1::PodResourcesLister::NewStub(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options_.deadline);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    // Start over on the next call rather than trusting a channel in backoff.
    channel_.reset();
    return StatusFromGrpc(status, "PodResources List on " + options_.socket_path);
  }
  return FlattenPodResources(response);
}

}  // namespace gfp::adapters::kubelet
