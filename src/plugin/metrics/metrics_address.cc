#include "plugin/metrics/metrics_address.h"

#include <arpa/inet.h>

#include <charconv>

#include "common/text_escape.h"

namespace gfp::plugin::metrics {
namespace {

constexpr std::size_t kMaxShownValue = 128;

Status Bad(const std::string& text, const std::string& why) {
  return InvalidArgument("--metrics-address=" + EscapeAndTruncate(text, kMaxShownValue) + ": " +
                         why + " (expected HOST:PORT or :PORT, e.g. :9402 or 127.0.0.1:9402)");
}

Result<std::uint16_t> ParsePort(const std::string& text, const std::string& port) {
  if (port.empty()) return Bad(text, "the port is missing");
  if (port.size() > 10 || port.find_first_not_of("0123456789") != std::string::npos) {
    return Bad(text, "the port is not a number");
  }
  unsigned long value = 0;
  std::from_chars(port.data(), port.data() + port.size(), value);
  if (value > 65535) return Bad(text, "port " + port + " is above 65535");
  return static_cast<std::uint16_t>(value);
}

}  // namespace

Result<MetricsAddress> ParseMetricsAddress(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return Bad(text, "there is no ':' before the port");
  MetricsAddress address;
  GFP_ASSIGN_OR_RETURN(address.port, ParsePort(text, text.substr(colon + 1)));
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    in6_addr v6{};
    if (::inet_pton(AF_INET6, host.c_str(), &v6) != 1) {
      return Bad(text, "[" + EscapeAndTruncate(host, kMaxShownValue) + "] is not an IPv6 address");
    }
    address.ipv6 = true;
  } else if (host == "localhost") {
    host = "127.0.0.1";
  } else if (!host.empty()) {
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) != 1) {
      return Bad(text, "host " + EscapeAndTruncate(host, kMaxShownValue) +
                           " is not an IPv4 address, localhost or [IPv6 address]");
    }
  }
  address.host = host;
  return address;
}

}  // namespace gfp::plugin::metrics
