#include "adapters/host/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

// Fills the new file `fd` with `content`, mode 0644 (the umask must not make it unreadable for
// its readers), synced when it must survive a power cut. `shown` names the file in errors.
Status Fill(const fs::path& target, int fd, const std::string& shown, std::string_view content,
            Durability durability) {
  if (::fchmod(fd, 0644) != 0) return StepFailed(target, "chmod of " + shown, errno);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return StepFailed(target, "writing " + shown, errno);
    done += static_cast<std::size_t>(n);
  }
  if (durability == Durability::kSurvivesPowerLoss && ::fsync(fd) != 0) {
    return StepFailed(target, "syncing " + shown, errno);
  }
  return Status::Ok();
}

Status WriteAll(const fs::path& target, const fs::path& temp, std::string_view content,
                Durability durability) {
  UniqueFd fd(CreateFresh(temp));
  if (fd.get() < 0) return StepFailed(target, "creating " + Shown(temp), errno);
  GFP_RETURN_IF_ERROR(Fill(target, fd.get(), Shown(temp), content, durability));
  if (fd.Close() != 0) return StepFailed(target, "closing " + Shown(temp), errno);
  return Status::Ok();
}

// open(O_TMPFILE) failed because the file system (or kernel) has no unnamed files; EISDIR is a
// kernel that reads O_TMPFILE as O_DIRECTORY alone.
bool NoUnnamedFiles(int err) { return err == EOPNOTSUPP || err == EISDIR || err == EINVAL; }

// An unnamed file in `dir`; errors name `target`, the file it is meant to become.
Result<UniqueFd> OpenUnnamed(const fs::path& dir, const fs::path& target) {
  UniqueFd fd(::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    const int err = errno;
    const Status failed = StepFailed(target, "creating an unnamed file in " + Shown(dir), err);
    if (NoUnnamedFiles(err)) return Unavailable(failed.message());
    return failed;
  }
  return fd;
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

Status WriteFileAtomically(const fs::path& path, std::string_view content, Durability durability) {
  auto file = UnnamedFile::Write(path, content, durability);
  if (!file.ok()) {
    if (file.status().code() == ErrorCode::kUnavailable) {
      return ReplaceFileAtomically(path, content, durability);
    }
    return file.status();
  }
  // Something at `path` (a file, a folder, a symlink, never followed), no /proc, or a folder that
  // went away: replaced through the staging folder instead, which names what is wrong.
  Status linked = file->Link();
  const ErrorCode code = linked.code();
  if (code == ErrorCode::kAlreadyExists || code == ErrorCode::kNotFound ||
      code == ErrorCode::kUnavailable) {
    return ReplaceFileAtomically(path, content, durability);
  }
  return linked;
}

Result<UniqueFd> UnnamedFile::Create(const fs::path& dir) { return OpenUnnamed(dir, dir); }

Result<UnnamedFile> UnnamedFile::Write(const fs::path& path, std::string_view content,
                                       Durability durability) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  GFP_ASSIGN_OR_RETURN(UniqueFd fd, OpenUnnamed(dir, path));
  return WriteInto(std::move(fd), path, content, durability);
}

Result<UnnamedFile> UnnamedFile::WriteInto(UniqueFd unnamed, const fs::path& path,
                                           std::string_view content, Durability durability) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  GFP_RETURN_IF_ERROR(
      Fill(path, unnamed.get(), "the unnamed file in " + Shown(dir), content, durability));
  return UnnamedFile(path, std::move(unnamed), durability);
}

Status UnnamedFile::Link() {
  char proc_path[40];
  std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd_.get());
  const std::string shown = "the unnamed file in " + Shown(path_.parent_path());
  // linkat never replaces: anything at the path answers EEXIST.
  if (::linkat(AT_FDCWD, proc_path, AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    const int err = errno;
    Status failed = StepFailed(path_, "linking " + shown + " into place", err);
    if (err == EEXIST) return AlreadyExists(failed.message());
    if (NoUnnamedFiles(err)) return Unavailable(failed.message());
    return failed;  // ENOENT: NotFound
  }
  if (fd_.Close() != 0) {
    const int err = errno;
    ::unlink(path_.c_str());
    return StepFailed(path_, "closing " + shown, err);
  }
  if (durability_ == Durability::kAtomicOnly) return Status::Ok();
  const fs::path dir = path_.has_parent_path() ? path_.parent_path() : fs::path(".");
  return FsyncDirectory(path_, dir);
}

}  // namespace gfp::adapters::host
