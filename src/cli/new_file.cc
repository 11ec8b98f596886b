#include "cli/new_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "common/text_escape.h"
#include "common/unique_fd.h"

namespace gfp::cli {
namespace {

std::string Shown(const std::filesystem::path& p) { return EscapeAndTruncate(p.string(), 300); }

std::string Reason(int error) { return std::strerror(error); }

const char* KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "a file";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "a device";
}

// A hidden name beside the destination that no one else picks: ".NAME.tmp-PID-RANDOM".
std::string TemporaryName(const std::string& name) {
  std::random_device random;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp-%d-%08x", static_cast<int>(::getpid()), random());
  return "." + name + suffix;
}

Status WriteAll(int fd, std::span<const unsigned char> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(Reason(n < 0 ? errno : EIO));
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

// Writes and syncs the temporary file; the caller removes it on failure.
Status FillTemporary(int dir, const std::string& temporary, std::span<const unsigned char> bytes) {
  UniqueFd fd(
      ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return InvalidArgument("cannot create a file there: " + Reason(errno));
  if (::fchmod(fd.get(), 0600) != 0) return Unavailable("chmod: " + Reason(errno));
  GFP_RETURN_IF_ERROR(WriteAll(fd.get(), bytes));
  if (::fsync(fd.get()) != 0) return Unavailable("fsync: " + Reason(errno));
  if (fd.Close() != 0) return Unavailable("close: " + Reason(errno));
  return Status::Ok();
}

// Renames without replacing: renameat2(RENAME_NOREPLACE), or where the file system lacks it a
// hard link (which fails on an existing name too) and the temporary name removed.
int RenameNoReplace(int dir, const std::string& from, const std::string& to) {
  if (::renameat2(dir, from.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (::linkat(dir, from.c_str(), dir, to.c_str(), 0) != 0) return -1;
  ::unlinkat(dir, from.c_str(), 0);
  return 0;
}

Status Exists(const std::filesystem::path& path, const std::string& kind) {
  return AlreadyExists(Shown(path) + " already exists (" + kind +
                       "); refusing to replace it: nothing was written");
}

}  // namespace

Status RefuseExisting(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return Exists(path, KindOf(st.st_mode));
  return Status::Ok();
}

Status WriteNewFile(const std::filesystem::path& path, std::span<const unsigned char> bytes) {
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgument(Shown(path) + " is not a file name");
  }
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    return InvalidArgument("folder " + Shown(folder) + " of " + Shown(path) +
                           " cannot be opened: " + Reason(errno));
  }
  struct stat st {};
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return Exists(path, KindOf(st.st_mode));
  }
  if (errno != ENOENT) return InvalidArgument(Shown(path) + ": " + Reason(errno));
  const std::string temporary = TemporaryName(name);
  Status filled = FillTemporary(dir.get(), temporary, bytes);
  if (filled.ok() && RenameNoReplace(dir.get(), temporary, name) != 0) {
    filled = errno == EEXIST ? Exists(path, "it appeared while the copy was written")
                             : Unavailable("rename: " + Reason(errno));
  }
  if (!filled.ok()) {
    ::unlinkat(dir.get(), temporary.c_str(), 0);
    if (filled.code() == ErrorCode::kAlreadyExists) return filled;
    return Status(filled.code(), "writing " + Shown(path) + " failed: " + filled.message() +
                                     " (nothing was left at " + Shown(path) + ")");
  }
  if (::fsync(dir.get()) != 0) {
    return Unavailable("syncing folder " + Shown(folder) + " failed: " + Reason(errno) + " (" +
                       Shown(path) + " is complete but may not survive a power cut)");
  }
  return Status::Ok();
}

}  // namespace gfp::cli
