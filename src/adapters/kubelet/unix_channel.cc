#include "adapters/kubelet/unix_channel.h"

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace gfp::adapters::kubelet {

std::string UnixSocketTarget(const std::string& socket_path) { return "unix:" + socket_path; }

std::shared_ptr<grpc::Channel> MakeUnixSocketChannel(const std::string& socket_path,
                                                     int max_receive_bytes) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  if (max_receive_bytes >= 0) args.SetMaxReceiveMessageSize(max_receive_bytes);
  return grpc::CreateCustomChannel(UnixSocketTarget(socket_path),
                                   grpc::InsecureChannelCredentials(), args);
}

}  // namespace gfp::adapters::kubelet
