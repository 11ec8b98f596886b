// --metrics-address (SPEC §2.1): `HOST:PORT` or `:PORT`. HOST is an IPv4 address, `localhost`, or
// an IPv6 address in brackets; empty means every address, IPv4 and IPv6. Port 0 picks a free
// port. What the listener binds for it is listen_address.h's.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace gfp::plugin::metrics {

struct MetricsAddress {
  std::string host;  // empty: every address (IPv4 and IPv6); IPv6 without brackets
  std::uint16_t port = 0;
  bool ipv6 = false;  // host is an IPv6 address
};

// Errors name the flag and the (escaped) value: "--metrics-address=x:99999: port 99999 is
// above 65535".
Result<MetricsAddress> ParseMetricsAddress(const std::string& text);

}  // namespace gfp::plugin::metrics
