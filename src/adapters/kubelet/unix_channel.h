// gRPC client channels to Unix sockets, configured the way every kubelet-facing client here needs.
#pragma once

#include <grpcpp/channel.h>

#include <memory>
#include <string>

namespace gfp::adapters::kubelet {

// "unix:/abs/path" (or "unix:rel/path"): the gRPC target for a socket file.
std::string UnixSocketTarget(const std::string& socket_path);

// A channel with its own subchannel pool, so that a channel recreated after the peer restarted
// never inherits the old connection's reconnect backoff from gRPC's process-wide pool.
// max_receive_bytes < 0 keeps gRPC's default (4 MiB).
std::shared_ptr<grpc::Channel> MakeUnixSocketChannel(const std::string& socket_path,
                                                     int max_receive_bytes = -1);

}  // namespace gfp::adapters::kubelet
