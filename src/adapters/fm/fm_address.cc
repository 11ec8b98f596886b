#include "adapters/fm/fm_address.h"

#include <charconv>

#include "adapters/fm/fm_abi.h"

namespace gfp::fm {
namespace {

// Parses a decimal number of 1..max_digits digits (no sign, no spaces) not above max_value.
bool ParseDecimal(std::string_view text, std::size_t max_digits, unsigned max_value,
                  unsigned* out) {
  if (text.empty() || text.size() > max_digits) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max_value) return false;
  *out = value;
  return true;
}

bool IsIpv4(std::string_view text) {
  int parts = 0;
  while (true) {
    std::size_t dot = text.find('.');
    unsigned octet = 0;
    if (!ParseDecimal(text.substr(0, dot), 3, 255, &octet)) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  return parts == 4;
}

}  // namespace

std::string FmAddress::AddressInfo() const {
  if (is_unix_socket) return path;
  return ipv4 + ":" + std::to_string(port);
}

Result<FmAddress> ParseFmAddress(std::string_view text) {
  const std::string quoted = "Fabric Manager address \"" + std::string(text) + "\"";
  if (text.empty()) return InvalidArgument("Fabric Manager address is empty");
  FmAddress address;
  if (text.front() == '/') {
    // addressInfo is a 256-byte C string: the path must leave room for its terminator.
    if (text.size() >= abi::kMaxStrLength) {
      return InvalidArgument(quoted + " is a Unix socket path longer than " +
                             std::to_string(abi::kMaxStrLength - 1) + " bytes");
    }
    if (text.find('\0') != std::string_view::npos) {
      return InvalidArgument(quoted + " contains a NUL byte");
    }
    address.is_unix_socket = true;
    address.path = std::string(text);
    return address;
  }
  std::string_view host = text;
  unsigned port = abi::kDefaultCmdPort;
  if (std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    std::string_view port_text = text.substr(colon + 1);
    if (!ParseDecimal(port_text, 5, 65535, &port) || port == 0) {
      return InvalidArgument(quoted + " has an invalid port \"" + std::string(port_text) +
                             "\" (expected 1..65535)");
    }
  }
  if (!IsIpv4(host)) {
    return InvalidArgument(quoted + " is neither a Unix socket path (starting with '/') nor "
                           "IPv4[:port]; \"" + std::string(host) + "\" is not an IPv4 address");
  }
  address.ipv4 = std::string(host);
  address.port = static_cast<std::uint16_t>(port);
  return address;
}

}  // namespace gfp::fm
