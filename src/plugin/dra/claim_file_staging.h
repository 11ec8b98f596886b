// A first Prepare's files written ahead, unseen (SPEC §11): ClaimPreparer stages them on another
// thread while the partition saga fsyncs its two commits, so that creating 14 inodes (9 files, 5
// folders) overlaps the disk flushes instead of following them, and only a rename and a link per
// CDI spec remain once the claim is granted. Nothing staged can be seen before Publish:
//   - each CDI spec is an unnamed file in the CDI folder (adapters::host::UnnamedFile), gone
//     with its descriptor unless linked;
//   - the claim's metadata folder (<plugin-dir>/dra-device-metadata/<claimUID>, its request
//     folders and their metadata.json) is built whole in the plugin's private folder
//     <plugin-dir>/.claim-staging and renamed into place in one step. A process that dies before
//     Publish leaves its half-built folder there; the next start empties it (ClearClaimStaging).
// Publish refuses when anything is in the way (an earlier folder of the claim's name, a leftover
// file, a symlink); the caller then writes the files one by one (WriteClaimFiles), which repairs
// whatever Publish left half done.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "adapters/host/atomic_file.h"
#include "common/status.h"
#include "plugin/dra/claim_files.h"
#include "plugin/dra/inode_reserve.h"

namespace gfp::plugin::dra {

class StagedClaimFiles {
 public:
  // Creates no base folder (a Prepare the saga refuses leaves none): NotFound while the CDI or
  // plugin folder is missing, Unavailable where the CDI folder's file system has no unnamed
  // files; errors name the file or folder and the step.
  // Folders and files come from `reserve` while it has them (made ahead: InodeReserve), else
  // they are made here.
  static Result<std::unique_ptr<StagedClaimFiles>> Stage(const ClaimFileDirs& dirs,
                                                         PreparedClaim claim,
                                                         InodeReserve* reserve = nullptr);
  ~StagedClaimFiles();  // removes the staged folder unless it was published
  StagedClaimFiles(const StagedClaimFiles&) = delete;
  StagedClaimFiles& operator=(const StagedClaimFiles&) = delete;

  const PreparedClaim& claim() const { return claim_; }

  // Renames the metadata folder into place, then links each CDI spec (a spec never names a
  // metadata folder that is not there yet). Once only.
  Status Publish();

 private:
  StagedClaimFiles(ClaimFileDirs dirs, PreparedClaim claim)
      : dirs_(std::move(dirs)), claim_(std::move(claim)) {}
  Status StageMetadata(const std::vector<ClaimFile>& files, InodeReserve* reserve);

  ClaimFileDirs dirs_;
  PreparedClaim claim_;
  std::filesystem::path metadata_staged_;  // below .claim-staging; empty once published
  std::vector<adapters::host::UnnamedFile> cdi_specs_;
};

// The plugin's private staging folder for claims' metadata folders.
std::filesystem::path ClaimStagingDir(const ClaimFileDirs& dirs);

// Creates ClaimStagingDir when missing (never the plugin folder it is in: NotFound then);
// refuses it unless it is a folder of this user that no one else may write in.
Status EnsureClaimStaging(const ClaimFileDirs& dirs);

// Removes what a killed process left in ClaimStagingDir (at start, before serving).
Status ClearClaimStaging(const ClaimFileDirs& dirs);

}  // namespace gfp::plugin::dra
