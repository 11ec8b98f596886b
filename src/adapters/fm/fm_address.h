// The FM SDK endpoint from --fm-address (SPEC §2.1): a value starting with '/' is a Unix socket
// path, anything else is IPv4[:port] with port 6666 when omitted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::fm {

struct FmAddress {
  bool is_unix_socket = false;
  std::string path;  // unix socket path (is_unix_socket)
  std::string ipv4;  // dotted quad (TCP)
  std::uint16_t port = 0;

  // The text for fmConnectParams.addressInfo: the path, or "a.b.c.d:port".
  std::string AddressInfo() const;
};

Result<FmAddress> ParseFmAddress(std::string_view text);

}  // namespace gfp::adapters::fm
