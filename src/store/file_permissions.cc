#include "store/file_permissions.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace gfp::store {
namespace {

std::string Errno() { return std::strerror(errno); }

}  // namespace

Status EnsurePrivateDirectory(const std::filesystem::path& dir) {
  if (dir.empty()) return Status::Ok();
  // Walk up to the first existing ancestor, then create downwards so every new level is 0700.
  std::vector<std::filesystem::path> missing;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        return FailedPrecondition("journal directory " + p.string() + " is not a directory");
      }
      break;
    }
    if (errno != ENOENT) {
      return FailedPrecondition("cannot inspect journal directory " + p.string() + ": " + Errno());
    }
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return FailedPrecondition("cannot create journal directory " + it->string() + ": " + Errno());
    }
    // mkdir applies the umask; chmod makes the mode exact.
    if (::chmod(it->c_str(), 0700) != 0) {
      return FailedPrecondition("cannot set mode 0700 on " + it->string() + ": " + Errno());
    }
  }
  return Status::Ok();
}

Status RestrictIfExists(const std::filesystem::path& file) {
  if (::chmod(file.c_str(), 0600) != 0 && errno != ENOENT) {
    return FailedPrecondition("cannot set mode 0600 on " + file.string() + ": " + Errno());
  }
  return Status::Ok();
}

}  // namespace gfp::store
