#include "plugin/dra/claim_file_store.h"

#include <sys/stat.h>

#include <cerrno>
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

}  // namespace

Status MakeClaimFolders(const ClaimFileDirs& dirs, const fs::path& dir, const fs::path& file) {
  const fs::path base = BaseOf(dirs, file);
  if (base.empty()) return OutsideBases(dirs, file);
  MadeFolders made;
  return MakeFolders(base, dir, file, made);
}

Status WriteClaimFiles(const ClaimFileDirs& dirs, const std::vector<ClaimFile>& files) {
  MadeFolders made;
  for (const ClaimFile& file : files) {
    const fs::path base = BaseOf(dirs, file.path);
    if (base.empty()) return OutsideBases(dirs, file.path);
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
  for (const fs::path& path : paths) {
    if (BaseOf(dirs, path).empty()) return OutsideBases(dirs, path);
    std::error_code ec;
    fs::remove_all(path, ec);  // a symlink is removed, never followed
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return Internal("cannot remove " + Shown(path) + ": " + ec.message());
    }
  }
  return Status::Ok();
}

}  // namespace gfp::plugin::dra
