#include "plugin/metrics/listen_address.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <cstring>

namespace gfp::plugin::metrics {

ListenAddress ListenAddressOf(const MetricsAddress& address, bool ipv6_available) {
  ListenAddress out;
  if (address.ipv6 || (address.host.empty() && ipv6_available)) {
    sockaddr_in6 v6{};
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(address.port);
    v6.sin6_addr = in6addr_any;
    // The parser checked the host; an empty one is [::].
    if (address.ipv6) ::inet_pton(AF_INET6, address.host.c_str(), &v6.sin6_addr);
    std::memcpy(&out.storage, &v6, sizeof v6);
    out.length = sizeof v6;
    out.ipv6 = true;
    out.dual_stack = address.host.empty();
    return out;
  }
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(address.port);
  v4.sin_addr.s_addr = htonl(INADDR_ANY);
  if (!address.host.empty()) ::inet_pton(AF_INET, address.host.c_str(), &v4.sin_addr);
  std::memcpy(&out.storage, &v4, sizeof v4);
  out.length = sizeof v4;
  return out;
}

bool Ipv6Available() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::string DescribeListenAddress(const ListenAddress& address, int bound_port) {
  char host[INET6_ADDRSTRLEN] = "";
  const std::string port = std::to_string(bound_port);
  if (!address.ipv6) {
    sockaddr_in v4{};
    std::memcpy(&v4, &address.storage, sizeof v4);
    ::inet_ntop(AF_INET, &v4.sin_addr, host, sizeof host);
    return std::string(host) + ":" + port;
  }
  sockaddr_in6 v6{};
  std::memcpy(&v6, &address.storage, sizeof v6);
  ::inet_ntop(AF_INET6, &v6.sin6_addr, host, sizeof host);
  return "[" + std::string(host) + "]:" + port + (address.dual_stack ? " (IPv4 and IPv6)" : "");
}

}  // namespace gfp::plugin::metrics
