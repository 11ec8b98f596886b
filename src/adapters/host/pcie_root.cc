#include "adapters/host/pcie_root.h"

#include <regex>
#include <system_error>

#include "adapters/host/sysfs_links.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {

Result<std::string> PcieRootOf(const std::filesystem::path& sysfs_root, const std::string& bdf) {
  const std::filesystem::path entry = sysfs_root / "bus" / "pci" / "devices" / bdf;
  const std::string what = "PCI function " + EscapeAndTruncate(bdf, 64);
  GFP_RETURN_IF_ERROR(CheckResolvesInside(entry, sysfs_root).WithContext(what));
  std::error_code ec;
  const auto real = std::filesystem::canonical(entry, ec);
  const auto devices = std::filesystem::canonical(sysfs_root, ec) / "devices";
  if (ec) return NotFound(what + ": " + ec.message());
  const auto relative = real.lexically_relative(devices);
  static const std::regex root("^pci[0-9a-f]{4}:[0-9a-f]{2}$");
  const std::string first = relative.empty() ? "" : relative.begin()->string();
  if (!std::regex_match(first, root)) {
    return InvalidArgument(what + " lives at " + EscapeAndTruncate(real.string(), 96) +
                           ", not below a " + (devices / "pci<domain>:<bus>").string() + " folder");
  }
  return first;
}

}  // namespace gfp::adapters::host
