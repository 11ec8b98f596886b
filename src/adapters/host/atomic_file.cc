#include "adapters/host/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/text_escape.h"
#include "common/unique_fd.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;

std::string Shown(const fs::path& path) { return EscapeAndTruncate(path.string(), 300); }

Status StepFailed(const fs::path& target, const std::string& step, int err) {
  std::string message = "cannot replace " + Shown(target) + ": " + step +
                        " failed: " + std::error_code(err, std::generic_category()).message();
  if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(std::move(message));
  if (err == ENOENT || err == ENOTDIR) return NotFound(std::move(message));
  return Internal(std::move(message));
}

Status FsyncDirectory(const fs::path& target, const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return StepFailed(target, "opening " + Shown(dir), errno);
  if (::fsync(fd.get()) != 0) return StepFailed(target, "syncing " + Shown(dir), errno);
  return Status::Ok();
}

// The staging folder exists as a real folder (created when missing, never through a symlink).
Status EnsureStagingDir(const fs::path& target, const fs::path& staging) {
  if (::mkdir(staging.c_str(), 0700) != 0 && errno != EEXIST) {
    return StepFailed(target, "creating " + Shown(staging), errno);
  }
  struct stat info {};
  if (::lstat(staging.c_str(), &info) != 0) {
    return StepFailed(target, "checking " + Shown(staging), errno);
  }
  if (!S_ISDIR(info.st_mode)) {
    return FailedPrecondition("cannot replace " + Shown(target) + ": " + Shown(staging) +
                              " is not a folder (remove it; it is where the new file is "
                              "written before it is renamed into place)");
  }
  // Someone else's folder, or one others may write in, could hold a planted file or link.
  if (info.st_uid != ::geteuid() || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPrecondition("cannot replace " + Shown(target) + ": " + Shown(staging) +
                              " is not a private folder of this user (remove it; it is created "
                              "0700 where the new file is written before it is renamed)");
  }
  return Status::Ok();
}

// Creates `temp` afresh: never opens an existing file or follows a link (a leftover of a killed
// run is removed first, so a planted hard link is unlinked, never written through).
int CreateFresh(const fs::path& temp) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(temp.c_str(), kFlags, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(temp.c_str()) == 0) {
    fd = ::open(temp.c_str(), kFlags, 0644);
  }
  return fd;
}

Status WriteAll(const fs::path& target, const fs::path& temp, std::string_view content,
                Durability durability) {
  UniqueFd fd(CreateFresh(temp));
  if (fd.get() < 0) return StepFailed(target, "creating " + Shown(temp), errno);
  // The umask must not make it unreadable for NFD.
  if (::fchmod(fd.get(), 0644) != 0) return StepFailed(target, "chmod of " + Shown(temp), errno);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return StepFailed(target, "writing " + Shown(temp), errno);
    done += static_cast<std::size_t>(n);
  }
  if (durability == Durability::kSurvivesPowerLoss && ::fsync(fd.get()) != 0) {
    return StepFailed(target, "syncing " + Shown(temp), errno);
  }
  if (fd.Close() != 0) return StepFailed(target, "closing " + Shown(temp), errno);
  return Status::Ok();
}

}  // namespace

Status ReplaceFileAtomically(const fs::path& path, std::string_view content,
                             Durability durability) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::path staging = dir / kStagingDirName;
  const fs::path temp = staging / (path.filename().string() + ".tmp");
  GFP_RETURN_IF_ERROR(EnsureStagingDir(path, staging));
  Status written = WriteAll(path, temp, content, durability);
  if (written.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    written = StepFailed(path, "renaming " + Shown(temp) + " onto it", errno);
  }
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return written;
  }
  if (durability == Durability::kAtomicOnly) return Status::Ok();
  return FsyncDirectory(path, dir);
}

}  // namespace gfp::adapters::host
