#include "adapters/host/bdf.h"

#include <cstdint>
#include <cstdio>

#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::uint32_t HexValue(std::string_view digits) {
  std::uint32_t value = 0;
  for (char c : digits) {
    std::uint32_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<std::uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<std::uint32_t>(c - 'a' + 10);
    } else {
      d = static_cast<std::uint32_t>(c - 'A' + 10);
    }
    value = value * 16 + d;
  }
  return value;
}

bool AllHex(std::string_view s) {
  for (char c : s) {
    if (!IsHexDigit(c)) return false;
  }
  return true;
}

}  // namespace

Result<std::string> NormalizeBdf(std::string_view text) {
  auto malformed = [&] {
    return InvalidArgument("\"" + EscapeAndTruncate(text, 128) +
                           "\" is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:1b:00.0)");
  };
  const auto first_colon = text.find(':');
  if (first_colon == std::string_view::npos) return malformed();
  const std::string_view domain = text.substr(0, first_colon);
  const std::string_view rest = text.substr(first_colon + 1);
  // rest must be exactly "BB:DD.F".
  if (domain.empty() || domain.size() > 8 || !AllHex(domain)) return malformed();
  if (rest.size() != 7 || rest[2] != ':' || rest[5] != '.') return malformed();
  const std::string_view bus = rest.substr(0, 2);
  const std::string_view device = rest.substr(3, 2);
  const char function = rest[6];
  if (!AllHex(bus) || !AllHex(device)) return malformed();
  if (function < '0' || function > '7') return malformed();
  const std::uint32_t device_number = HexValue(device);
  if (device_number > 0x1f) return malformed();

  // "%04x" like the kernel's pci_name(): domains above 0xffff (VMD) keep all their digits.
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04x:%02x:%02x.%c", HexValue(domain), HexValue(bus),
                device_number, function);
  return std::string(buffer);
}

bool IsCanonicalBdf(std::string_view text) {
  auto normalized = NormalizeBdf(text);
  return normalized.ok() && *normalized == text;
}

}  // namespace gfp::adapters::host
