#include "plugin/dra/claim_file_staging.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/text_escape.h"
#include "plugin/dra/claim_file_store.h"

namespace gfp::plugin::dra {
namespace {

namespace fs = std::filesystem;

std::string Shown(const fs::path& path) { return EscapeAndTruncate(path.string(), 300); }

std::string OsError(int err) { return std::error_code(err, std::generic_category()).message(); }

// `relative` when `path` lies below `base` ("" otherwise).
fs::path Below(const fs::path& base, const fs::path& path) {
  fs::path relative = path.lexically_normal().lexically_relative(base.lexically_normal());
  if (relative.empty() || relative == "." || relative.begin()->string() == "..") return {};
  return relative;
}

// The staging folder exists, is a real folder, this user's, and no one else may write in it (a
// planted file or link there would end up in a claim's metadata folder).
Status EnsurePrivateStaging(const fs::path& staging) {
  if (::mkdir(staging.c_str(), 0700) != 0 && errno != EEXIST) {
    const int err = errno;
    std::string message = "cannot create " + Shown(staging) + ": " + OsError(err);
    return err == ENOENT ? NotFound(std::move(message)) : Internal(std::move(message));
  }
  struct stat info {};
  if (::lstat(staging.c_str(), &info) != 0) {
    return Internal("cannot check " + Shown(staging) + ": " + OsError(errno));
  }
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid() ||
      (info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPrecondition(Shown(staging) +
                              " is not a private folder of this user (remove it; claims' "
                              "metadata folders are built there before they are renamed)");
  }
  return Status::Ok();
}

bool IsFolder(const fs::path& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// A new folder at `at` (one already there is kept, as mkdir's EEXIST): a reserved one renamed
// there when the reserve has one.
Status MakeStagedFolder(const fs::path& at, InodeReserve* reserve) {
  struct stat info {};
  if (::lstat(at.c_str(), &info) == 0) return Status::Ok();
  if (auto spare = reserve ? reserve->TakeFolder() : std::nullopt) {
    if (::rename(spare->c_str(), at.c_str()) == 0) return Status::Ok();
    ::rmdir(spare->c_str());
  }
  if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) {
    return Internal("cannot create " + Shown(at) + ": " + OsError(errno));
  }
  return Status::Ok();
}

// A metadata.json in the staged folder, written into a reserved unnamed file when there is one.
Status WriteStagedFile(const fs::path& path, const std::string& content, InodeReserve* reserve) {
  constexpr auto kAtomicOnly = adapters::host::Durability::kAtomicOnly;
  if (auto spare = reserve ? reserve->TakeStagingFile() : std::nullopt) {
    auto file =
        adapters::host::UnnamedFile::WriteInto(std::move(*spare), path, content, kAtomicOnly);
    if (file.ok() && file->Link().ok()) return Status::Ok();
  }
  return adapters::host::WriteFileAtomically(path, content, kAtomicOnly);
}

// A CDI spec as an unnamed file in the CDI folder: a reserved one when there is one.
Result<adapters::host::UnnamedFile> StageCdiSpec(const ClaimFile& file, InodeReserve* reserve) {
  constexpr auto kAtomicOnly = adapters::host::Durability::kAtomicOnly;
  if (auto spare = reserve ? reserve->TakeCdiFile() : std::nullopt) {
    return adapters::host::UnnamedFile::WriteInto(std::move(*spare), file.path, file.content,
                                                  kAtomicOnly);
  }
  return adapters::host::UnnamedFile::Write(file.path, file.content, kAtomicOnly);
}

}  // namespace

Status EnsureClaimStaging(const ClaimFileDirs& dirs) {
  return EnsurePrivateStaging(ClaimStagingDir(dirs));
}

fs::path ClaimStagingDir(const ClaimFileDirs& dirs) { return dirs.plugin_dir / ".claim-staging"; }

Result<std::unique_ptr<StagedClaimFiles>> StagedClaimFiles::Stage(const ClaimFileDirs& dirs,
                                                                  PreparedClaim claim,
                                                                  InodeReserve* reserve) {
  if (std::string problem = ClaimUidProblem(claim); !problem.empty()) {
    return InvalidArgument("cannot stage the files of " + problem);
  }
  std::unique_ptr<StagedClaimFiles> staged(new StagedClaimFiles(dirs, std::move(claim)));
  const std::vector<ClaimFile> files = ClaimFiles(staged->claim_, dirs);
  GFP_RETURN_IF_ERROR(staged->StageMetadata(files, reserve));
  const fs::path metadata_dir = ClaimMetadataDir(staged->claim_, dirs);
  for (const ClaimFile& file : files) {
    if (!Below(metadata_dir, file.path).empty()) continue;  // staged above
    if (file.path.parent_path().lexically_normal() != dirs.cdi_dir.lexically_normal()) {
      return InvalidArgument("claim file " + Shown(file.path) + " is neither a CDI spec nor in " +
                             Shown(metadata_dir));
    }
    GFP_ASSIGN_OR_RETURN(auto spec, StageCdiSpec(file, reserve));
    staged->cdi_specs_.push_back(std::move(spec));
  }
  return staged;
}

// Builds the claim's metadata folder, with its request folders and files, in a new folder below
// the staging folder (mode 0755, as WriteClaimFiles makes it).
Status StagedClaimFiles::StageMetadata(const std::vector<ClaimFile>& files, InodeReserve* reserve) {
  const fs::path staging = ClaimStagingDir(dirs_);
  GFP_RETURN_IF_ERROR(EnsurePrivateStaging(staging));
  // A reserved folder still there (the staging folder may have been emptied since), else a new one.
  if (auto spare = reserve ? reserve->TakeFolder() : std::nullopt; spare && IsFolder(*spare)) {
    metadata_staged_ = std::move(*spare);
  } else {
    std::string name = (staging / "claim.XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) {
      return Internal("cannot create a folder in " + Shown(staging) + ": " + OsError(errno));
    }
    metadata_staged_ = name;
    if (::chmod(name.c_str(), 0755) != 0) {
      return Internal("cannot chmod " + Shown(metadata_staged_) + ": " + OsError(errno));
    }
  }
  const fs::path metadata_dir = ClaimMetadataDir(claim_, dirs_);
  for (const ClaimFile& file : files) {
    const fs::path relative = Below(metadata_dir, file.path);
    if (relative.empty()) continue;  // a CDI spec
    fs::path at = metadata_staged_;
    for (const auto& part : relative.parent_path()) {
      at /= part;
      GFP_RETURN_IF_ERROR(MakeStagedFolder(at, reserve));
    }
    GFP_RETURN_IF_ERROR(WriteStagedFile(metadata_staged_ / relative, file.content, reserve));
  }
  return Status::Ok();
}

StagedClaimFiles::~StagedClaimFiles() {
  if (metadata_staged_.empty()) return;
  std::error_code ignored;
  fs::remove_all(metadata_staged_, ignored);
}

Status StagedClaimFiles::Publish() {
  if (metadata_staged_.empty()) return FailedPrecondition("the claim's files were published");
  const fs::path metadata_dir = ClaimMetadataDir(claim_, dirs_);
  GFP_RETURN_IF_ERROR(MakeClaimFolders(dirs_, metadata_dir.parent_path(), metadata_dir));
  // Onto nothing or an empty folder only: a folder with files in it (ENOTEMPTY or EEXIST), or a
  // symlink or file (ENOTDIR) there, is left to WriteClaimFiles.
  if (::rename(metadata_staged_.c_str(), metadata_dir.c_str()) != 0) {
    return FailedPrecondition("cannot rename " + Shown(metadata_staged_) + " onto " +
                              Shown(metadata_dir) + ": " + OsError(errno));
  }
  metadata_staged_.clear();
  for (adapters::host::UnnamedFile& spec : cdi_specs_) GFP_RETURN_IF_ERROR(spec.Link());
  return Status::Ok();
}

Status ClearClaimStaging(const ClaimFileDirs& dirs) {
  std::error_code ec;
  fs::remove_all(ClaimStagingDir(dirs), ec);  // a symlink there is removed, never followed
  if (ec) return Internal("cannot empty " + Shown(ClaimStagingDir(dirs)) + ": " + ec.message());
  return Status::Ok();
}

}  // namespace gfp::plugin::dra
