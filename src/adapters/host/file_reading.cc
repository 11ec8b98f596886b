#include "adapters/host/file_reading.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace gfp::adapters::host {

Status ErrnoStatus(int err) {
  std::string reason = std::error_code(err, std::generic_category()).message();
  if (err == ENOENT || err == ENOTDIR) return NotFound(std::move(reason));
  return Internal(std::move(reason));
}

std::string FileTypeName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "an unknown kind of file";
  }
}

Result<std::string> ReadWholeFile(const std::filesystem::path& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoStatus(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return InvalidArgument("not a regular file (" + FileTypeName(info.st_mode) + ")");
  }
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

namespace {

// stat() for the Check* functions: the mode, or the error they report.
Result<unsigned> StatMode(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return static_cast<unsigned>(info.st_mode);
  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) return NotFound("does not exist");
  return Internal("cannot be checked: " + std::error_code(err, std::generic_category()).message());
}

}  // namespace

Status CheckIsRegularFile(const std::filesystem::path& path) {
  GFP_ASSIGN_OR_RETURN(unsigned mode, StatMode(path));
  if (S_ISREG(mode)) return Status::Ok();
  return InvalidArgument("is not a regular file (" + FileTypeName(mode) + ")");
}

Status CheckIsDirectory(const std::filesystem::path& path) {
  GFP_ASSIGN_OR_RETURN(unsigned mode, StatMode(path));
  if (S_ISDIR(mode)) return Status::Ok();
  return InvalidArgument("is not a directory (" + FileTypeName(mode) + ")");
}

Result<bool> PathExists(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return true;
  if (errno == ENOENT || errno == ENOTDIR) return false;
  return ErrnoStatus(errno);
}

}  // namespace gfp::adapters::host
