#include "adapters/fm/fm_address.h"

#include <algorithm>
#include <charconv>

#include "adapters/fm/fm_abi.h"
#include "common/text_escape.h"

namespace gfp::adapters::fm {
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

// Control characters are never part of an address; a space may be in a socket path only.
bool HasSpaceOrControl(std::string_view text, bool space_allowed) {
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || (byte == ' ' && !space_allowed)) return true;
  }
  return false;
}

// "[::1]:6666", "::1", "fe80::1": the SDK's addressInfo has no IPv6 form (reference/
// fabric-manager.md: "x.x.x.x" or "x.x.x.x:yyyy", a Unix path, or a VSOCK "cid:port").
bool LooksLikeIpv6(std::string_view text) {
  if (text.front() == '[') return true;
  return std::count(text.begin(), text.end(), ':') > 1 && !IsIpv4(text.substr(0, text.find(':')));
}

}  // namespace

std::string FmAddress::AddressInfo() const {
  if (is_unix_socket) return path;
  return ipv4 + ":" + std::to_string(port);
}

Result<FmAddress> ParseFmAddress(std::string_view text) {
  if (text.empty()) return InvalidArgument("Fabric Manager address is empty");
  // Flag text echoed back: escaped so a newline cannot forge a log line.
  const std::string quoted = "Fabric Manager address \"" + EscapeAndTruncate(text, 300) + "\"";
  if (HasSpaceOrControl(text, text.front() == '/')) {
    return InvalidArgument(quoted + " contains whitespace or control characters");
  }
  FmAddress address;
  if (text.front() == '/') {
    // addressInfo is a 256-byte C string: the path must leave room for its terminator.
    if (text.size() >= abi::kMaxStrLength) {
      return InvalidArgument(quoted + " is a Unix socket path longer than " +
                             std::to_string(abi::kMaxStrLength - 1) + " bytes");
    }
    address.is_unix_socket = true;
    address.path = std::string(text);
    return address;
  }
  if (LooksLikeIpv6(text)) {
    return InvalidArgument(quoted +
                           " is IPv6, which the Fabric Manager SDK does not support (its "
                           "addressInfo takes IPv4[:port] or a Unix socket path)");
  }
  std::string_view host = text;
  unsigned port = abi::kDefaultCmdPort;
  if (std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    const std::string_view port_text = text.substr(colon + 1);
    if (host.empty()) return InvalidArgument(quoted + " has no host before ':'");
    if (port_text.empty()) return InvalidArgument(quoted + " has no port after ':'");
    if (!ParseDecimal(port_text, 5, 65535, &port) || port == 0) {
      return InvalidArgument(quoted + " has an invalid port \"" + EscapeControl(port_text) +
                             "\" (expected 1..65535)");
    }
  }
  if (!IsIpv4(host)) {
    return InvalidArgument(quoted +
                           " is neither a Unix socket path (starting with '/') nor "
                           "IPv4[:port]; \"" +
                           EscapeControl(host) + "\" is not an IPv4 address");
  }
  address.ipv4 = std::string(host);
  address.port = static_cast<std::uint16_t>(port);
  return address;
}

}  // namespace gfp::adapters::fm
