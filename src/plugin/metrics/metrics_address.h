// --metrics-address (SPEC §2.1): `HOST:PORT` or `:PORT`. HOST is an IPv4 address, `localhost`, or
// an IPv6 address in brackets; empty means every address. Port 0 picks a free port.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace gfp::plugin::metrics {

struct MetricsAddress {
  std::string host;  // empty: all addresses; IPv6 without brackets
  std::uint16_t port = 0;
  bool ipv6 = false;

  // The address as civetweb's listening_ports option wants it ("127.0.0.1:0", "0", "[::1]:0").
  std::string ListeningPortsOption() const;
  // For the log line, with the port actually bound: "127.0.0.1:41233", "0.0.0.0:41233".
  std::string Describe(int bound_port) const;
};

// Whether the linked civetweb can listen on IPv6 addresses.
bool IpV6Supported();

// Errors name the flag and the (escaped) value: "--metrics-address=x:99999: port 99999 is
// above 65535".
Result<MetricsAddress> ParseMetricsAddress(const std::string& text);

}  // namespace gfp::plugin::metrics
