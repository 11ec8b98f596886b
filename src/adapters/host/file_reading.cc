#include "adapters/host/file_reading.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace gfp::adapters {

Status ErrnoStatus(int err) {
  std::string reason = std::error_code(err, std::generic_category()).message();
  if (err == ENOENT || err == ENOTDIR) return NotFound(std::move(reason));
  return Internal(std::move(reason));
}

Result<std::string> ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno);
  std::string content;
  char buffer[8192];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err);
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    if (content.size() > max_bytes) {
      ::close(fd);
      return ResourceExhausted("file is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return content;
}

Result<std::string> ReadLinkBasename(const std::filesystem::path& path) {
  char buffer[4096];
  const ssize_t n = ::readlink(path.c_str(), buffer, sizeof buffer);
  if (n < 0) return ErrnoStatus(errno);
  if (static_cast<std::size_t>(n) >= sizeof buffer) return Internal("link target too long");
  std::string target(buffer, static_cast<std::size_t>(n));
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  const auto slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

Result<std::vector<std::string>> ListDirectory(const std::filesystem::path& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno);
  std::vector<std::string> names;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      const int err = errno;
      ::closedir(dir);
      if (err != 0) return ErrnoStatus(err);
      break;
    }
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<bool> PathExists(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return ErrnoStatus(errno);
}

}  // namespace gfp::adapters
