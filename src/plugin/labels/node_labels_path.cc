// CheckNodeLabelsPath (declared in node_labels_file.h): serve's start-up check of the path.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "adapters/host/file_reading.h"
#include "common/text_escape.h"
#include "plugin/labels/node_labels_file.h"

namespace gfp::plugin::labels {
namespace {

namespace fs = std::filesystem;

std::string OsReason(int err) { return std::error_code(err, std::generic_category()).message(); }

Status CheckFileName(const fs::path& path) {
  const std::string name = path.filename().string();
  if (name.empty() || name == "." || name == "..") {
    return InvalidArgument(
        "names a folder, not a file (give the feature file's full path, e.g. "
        "/etc/kubernetes/node-feature-discovery/features.d/gpu-fabric)");
  }
  if (name[0] == '.') {
    return InvalidArgument("is a hidden file name: NFD ignores files whose name starts with '.'");
  }
  if (name.size() > kMaxNodeLabelsNameLength) {
    return InvalidArgument("has a file name of " + std::to_string(name.size()) +
                           " characters (at most " + std::to_string(kMaxNodeLabelsNameLength) +
                           ")");
  }
  return Status::Ok();
}

// What is at the path itself, symlinks not followed: nothing yet, or a regular file to replace.
Status CheckExistingFile(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Status::Ok();
    if (errno == ENOTDIR) return Status::Ok();  // the parent check names the culprit
    return Internal("cannot be checked: " + OsReason(errno));
  }
  if (S_ISLNK(info.st_mode)) {
    return InvalidArgument(
        "is a symbolic link; give the real path (the file is replaced by a rename, which would "
        "replace the link, not its target)");
  }
  if (!S_ISREG(info.st_mode)) {
    return InvalidArgument("is not a regular file (" + adapters::host::FileTypeName(info.st_mode) +
                           ")");
  }
  return Status::Ok();
}

Status CheckParentFolder(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string shown = EscapeAndTruncate(dir.string(), 300);
  const Status is_dir = adapters::host::CheckIsDirectory(dir);
  if (is_dir.code() == ErrorCode::kNotFound) {
    return NotFound(": folder " + shown +
                    " does not exist (it must be NFD's features.d folder, mounted from the host; "
                    "the plugin does not create it)");
  }
  if (!is_dir.ok()) return Status(is_dir.code(), ": " + shown + " " + is_dir.message());
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return FailedPrecondition(": folder " + shown + " is not writable: " + OsReason(errno));
  }
  return Status::Ok();
}

}  // namespace

Status CheckNodeLabelsPath(const fs::path& path) {
  if (path.native().size() > kMaxNodeLabelsPathLength) {
    return InvalidArgument("is too long (" + std::to_string(path.native().size()) +
                           " characters; at most " + std::to_string(kMaxNodeLabelsPathLength) +
                           ")");
  }
  GFP_RETURN_IF_ERROR(CheckFileName(path));
  GFP_RETURN_IF_ERROR(CheckParentFolder(path));
  return CheckExistingFile(path);
}

}  // namespace gfp::plugin::labels
