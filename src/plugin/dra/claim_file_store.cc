#include "plugin/dra/claim_file_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <system_error>

#include "adapters/host/atomic_file.h"
#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;

std::string Shown(const fs::path& path) { return EscapeAndTruncate(path.string(), 300); }

// The base `path` lies below (the CDI folder or the plugin folder), or empty.
fs::path BaseOf(const ClaimFileDirs& dirs, const fs::path& path) {
  for (const fs::path& base : {dirs.cdi_dir, dirs.plugin_dir}) {
    const fs::path relative = path.lexically_normal().lexically_relative(base.lexically_normal());
    if (!relative.empty() && relative.begin()->string() != ".." && relative != ".") return base;
  }
  return {};
}

// The folders one WriteClaimFiles call has made or checked: each is checked once, not per file.
using MadeFolders = std::set<fs::path>;

// Each folder from `base` down to `dir` exists as a real folder, created 0755 when missing. A
// folder this call created is one (mkdir made it); only one that was there is checked.
Status MakeFolders(const fs::path& base, const fs::path& dir, const fs::path& file,
                   MadeFolders& made) {
  fs::path at = base;
  for (const auto& part : dir.lexically_normal().lexically_relative(base.lexically_normal())) {
    if (part == ".") continue;
    at /= part;
    if (made.count(at) != 0) continue;
    if (::mkdir(at.c_str(), 0755) != 0) {
      if (errno != EEXIST) {
        return Internal("cannot write " + Shown(file) + ": creating " + Shown(at) +
                        " failed: " + std::error_code(errno, std::generic_category()).message());
      }
      struct stat info {};
      if (::lstat(at.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        return FailedPrecondition("cannot write " + Shown(file) + ": " + Shown(at) +
                                  " is not a folder (a symlink or a file is there; remove it)");
      }
    }
    made.insert(at);
  }
  return Status::Ok();
}

Status OutsideBases(const ClaimFileDirs& dirs, const fs::path& path) {
  return InvalidArgument("claim file " + Shown(path) + " is outside " + Shown(dirs.cdi_dir) +
                         " and " + Shown(dirs.plugin_dir));
}

// The parts of `path` after `base`'s, as written (not normalized); none when `path` does not
// begin with them (it reaches the base only through "..").
std::optional<std::vector<std::string>> PartsBelow(const fs::path& base, const fs::path& path) {
  auto at = path.begin();
  for (const auto& part : base) {
    if (part.empty()) continue;  // the base's trailing '/'
    if (at == path.end() || *at != part) return std::nullopt;
    ++at;
  }
  std::vector<std::string> parts;
  for (; at != path.end(); ++at) parts.push_back(at->string());
  return parts;
}

// The base of a path laid out as claim_files.h says, or why it is not one: each part below the
// base a plain name (a uid or request "..", "." or with a '/' must not reach another claim's
// files or the plugin's own), a CDI spec directly in the CDI folder (CDI reads no sub-folder),
// below the plugin folder a claim's metadata folder or a request's metadata.json in it.
Result<fs::path> ClaimPathBase(const ClaimFileDirs& dirs, const fs::path& path) {
  const fs::path base = BaseOf(dirs, path);
  if (base.empty()) return OutsideBases(dirs, path);
  const auto parts = PartsBelow(base, path);
  const bool plain =
      parts && !parts->empty() && std::none_of(parts->begin(), parts->end(), [](const auto& part) {
        return part.empty() || part == "." || part == "..";
      });
  if (!plain) {
    return InvalidArgument("claim file " + Shown(path) +
                           " has an empty, '.' or '..' part (its claim's uid or request is no "
                           "plain file name)");
  }
  const bool laid_out =
      base == dirs.cdi_dir
          ? parts->size() == 1
          : (*parts)[0] == kMetadataFolderName &&
                (parts->size() == 2 || (parts->size() == 4 && (*parts)[3] == "metadata.json"));
  if (!laid_out) {
    return InvalidArgument("claim file " + Shown(path) + " is neither directly in " +
                           Shown(dirs.cdi_dir) + " nor a claim's in " +
                           Shown(dirs.plugin_dir / kMetadataFolderName));
  }
  return base;
}

// Every path is a claim's (ClaimPathBase): checked before any is written or removed.
Status CheckClaimPaths(const ClaimFileDirs& dirs, const std::vector<fs::path>& paths) {
  for (const fs::path& path : paths) GFP_RETURN_IF_ERROR(ClaimPathBase(dirs, path).status());
  return Status::Ok();
}

bool IsRealFolder(const fs::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The metadata.json of an earlier version's request folder names `uid` as its claim's.
bool NamesUid(const fs::path& file, const std::string& uid) {
  struct stat info {};
  if (::lstat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  auto content = adapters::host::ReadWholeFile(file, 1 << 20);
  if (!content.ok()) return false;
  const auto json = nlohmann::json::parse(*content, nullptr, false);
  if (!json.is_object() || !json.contains("metadata") || !json["metadata"].is_object()) {
    return false;
  }
  const auto& metadata = json["metadata"];
  return metadata.contains("uid") && metadata["uid"].is_string() && metadata["uid"] == uid;
}

// The earlier layout's request folders of this uid (OldLayoutMetadataDir), and the claim's
// folder when nothing else is left in it. What names another uid, or none, stays: it may be the
// files of a claim made again under this name, prepared before the upgrade.
Status RemoveOldLayoutFiles(const ClaimFileDirs& dirs, const PreparedClaim& claim) {
  const fs::path folder = OldLayoutMetadataDir(claim, dirs);
  if (folder.empty() || !IsRealFolder(folder.parent_path()) || !IsRealFolder(folder)) {
    return Status::Ok();  // none, or a planted link: never followed
  }
  auto names = adapters::host::ListDirectory(folder);
  if (!names.ok()) {
    if (names.status().code() == ErrorCode::kNotFound) return Status::Ok();
    return Internal("cannot list " + Shown(folder) + ": " + names.status().message());
  }
  for (const std::string& name : *names) {
    const fs::path request = folder / name;
    if (!IsRealFolder(request) || !NamesUid(request / "metadata.json", claim.uid)) continue;
    std::error_code ec;
    fs::remove_all(request, ec);
    if (ec) return Internal("cannot remove " + Shown(request) + ": " + ec.message());
  }
  if (::rmdir(folder.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) {
    return Internal("cannot remove " + Shown(folder) + ": " +
                    std::error_code(errno, std::generic_category()).message());
  }
  return Status::Ok();
}

}  // namespace

Status MakeClaimFolders(const ClaimFileDirs& dirs, const fs::path& dir, const fs::path& file) {
  GFP_ASSIGN_OR_RETURN(const fs::path base, ClaimPathBase(dirs, file));
  MadeFolders made;
  return MakeFolders(base, dir, file, made);
}

Status WriteClaimFiles(const ClaimFileDirs& dirs, const std::vector<ClaimFile>& files) {
  std::vector<fs::path> paths;
  for (const ClaimFile& file : files) paths.push_back(file.path);
  GFP_RETURN_IF_ERROR(CheckClaimPaths(dirs, paths));
  MadeFolders made;
  for (const ClaimFile& file : files) {
    const fs::path base = BaseOf(dirs, file.path);
    if (made.insert(base).second) {
      std::error_code ec;
      fs::create_directories(base, ec);  // --cdi-dir may not exist yet on a fresh host
      if (ec) return Internal("cannot create " + Shown(base) + ": " + ec.message());
    }
    GFP_RETURN_IF_ERROR(MakeFolders(base, file.path.parent_path(), file.path, made));
    // No fsync: a repeated Prepare (kubelet's, after a node restart too) compares each file's
    // content and rewrites what a power cut lost, journal first; two disk flushes per file
    // would be most of a Prepare's time. A claim's files are new on its first Prepare: each is
    // linked into place whole, without a staging folder per metadata folder.
    GFP_RETURN_IF_ERROR(adapters::host::WriteFileAtomically(
        file.path, file.content, adapters::host::Durability::kAtomicOnly));
  }
  return Status::Ok();
}

bool ClaimFilesPresent(const std::vector<ClaimFile>& files) {
  for (const ClaimFile& file : files) {
    auto content = adapters::host::ReadWholeFile(file.path, file.content.size() + 1);
    if (!content.ok() || *content != file.content) return false;
  }
  return true;
}

Status RemoveClaimFiles(const ClaimFileDirs& dirs, const std::vector<fs::path>& paths) {
  GFP_RETURN_IF_ERROR(CheckClaimPaths(dirs, paths));
  for (const fs::path& path : paths) {
    std::error_code ec;
    fs::remove_all(path, ec);  // a symlink is removed, never followed
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return Internal("cannot remove " + Shown(path) + ": " + ec.message());
    }
  }
  return Status::Ok();
}

Status RemoveClaimFilesOf(const ClaimFileDirs& dirs, const PreparedClaim& claim) {
  if (std::string problem = ClaimUidProblem(claim); !problem.empty()) {
    return InvalidArgument("cannot remove the files of " + problem);
  }
  // A path a request name would put elsewhere was never written (WriteClaimFiles refuses it):
  // left out, so that such a claim's Unprepare still removes the rest.
  std::vector<fs::path> paths;
  for (fs::path& path : ClaimPaths(claim, dirs)) {
    if (ClaimPathBase(dirs, path).ok()) paths.push_back(std::move(path));
  }
  GFP_RETURN_IF_ERROR(RemoveClaimFiles(dirs, paths));
  return RemoveOldLayoutFiles(dirs, claim);
}

}  // namespace gfp::plugin::dra
