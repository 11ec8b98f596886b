#include "sim/kubelet/socket_files.h"

#include <system_error>

namespace gfp::kubelet {

Result<std::vector<std::filesystem::path>> RemoveSocketsIn(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return NotFound("listing device-plugin directory " + dir.string() + ": " + ec.message());
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code status_ec;
    if (!it->is_socket(status_ec) || status_ec) continue;
    std::error_code remove_ec;
    if (std::filesystem::remove(it->path(), remove_ec)) {
      removed.push_back(it->path());
    } else if (remove_ec) {
      return Internal("removing socket " + it->path().string() + ": " + remove_ec.message());
    }
  }
  if (ec) return Internal("listing device-plugin directory " + dir.string() + ": " + ec.message());
  return removed;
}

}  // namespace gfp::kubelet
