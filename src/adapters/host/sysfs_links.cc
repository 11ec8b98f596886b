#include "adapters/host/sysfs_links.h"

#include <system_error>

#include "common/text_escape.h"

namespace gfp::adapters::host {

Status CheckResolvesInside(const std::filesystem::path& path, const std::filesystem::path& root) {
  std::error_code ec;
  const std::filesystem::path real_root = std::filesystem::canonical(root, ec);
  if (ec) return NotFound("cannot resolve " + EscapeControl(root.string()) + ": " + ec.message());
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return NotFound("does not resolve: " + ec.message());
  auto r = real_root.begin();
  auto p = real.begin();
  for (; r != real_root.end(); ++r, ++p) {
    if (p == real.end() || *p != *r) {
      return InvalidArgument("leads outside " + EscapeControl(real_root.string()) + " (to " +
                             EscapeAndTruncate(real.string(), 96) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace gfp::adapters::host
