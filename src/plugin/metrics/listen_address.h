// Where the --metrics-address listener binds (SPEC §2.1): the socket address made from a parsed
// MetricsAddress, whether the socket is IPv6 and whether it is dual-stack (an IPv6 socket that
// IPv4 clients reach too, through IPv4-mapped addresses), and the line the log shows for it.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

#include "plugin/metrics/metrics_address.h"

namespace gfp::plugin::metrics {

struct ListenAddress {
  sockaddr_storage storage{};  // a sockaddr_in or a sockaddr_in6, the port in network order
  socklen_t length = 0;
  bool ipv6 = false;        // an AF_INET6 socket
  bool dual_stack = false;  // an AF_INET6 socket with IPV6_V6ONLY off: IPv4 clients reach it too

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// `[H]:P` binds H over IPv6, `H:P` binds H over IPv4, `:P` every address: one dual-stack socket
// on [::], or 0.0.0.0 alone when `ipv6_available` is false (a kernel without IPv6).
ListenAddress ListenAddressOf(const MetricsAddress& address, bool ipv6_available);

// Whether this host can open an IPv6 socket at all (false with ipv6.disable=1).
bool Ipv6Available();

// For the log line, with the port actually bound: "127.0.0.1:41233", "[::1]:41233",
// "[::]:41233 (IPv4 and IPv6)", "0.0.0.0:41233".
std::string DescribeListenAddress(const ListenAddress& address, int bound_port);

}  // namespace gfp::plugin::metrics
