// A prepared claim's files (claim_files.h) on the host: written atomically, checked, removed.
// Every file must lie where claim_files.h lays them out (a CDI spec directly in the CDI folder,
// a claim's metadata folder and its requests' metadata.json below the plugin folder, no part of
// the path empty, "." or ".."; else InvalidArgument before anything is written or removed), and
// no folder between such a base and a file may be a symlink (a planted link must not redirect
// what the plugin writes).
#pragma once

#include <filesystem>
#include <vector>

#include "common/status.h"
#include "plugin/dra/claim_files.h"

namespace gfp::plugin::dra {

// Creates the missing folders (0755) below the bases and replaces each file atomically (0644).
// Errors name the file and the step; on an error the files written before it stay (the claim is
// not prepared, and a repeated Prepare writes them again).
Status WriteClaimFiles(const ClaimFileDirs& dirs, const std::vector<ClaimFile>& files);

// Each folder from the base `dir` lies below (the CDI folder or the plugin folder) down to `dir`
// is a real folder, created 0755 where missing; a symlink or a file on the way is
// FailedPrecondition, and a `dir` below neither base InvalidArgument. Errors name `file`, what
// the folders are for.
Status MakeClaimFolders(const ClaimFileDirs& dirs, const std::filesystem::path& dir,
                        const std::filesystem::path& file);

// Every file is a regular file holding exactly its content (what a repeated Prepare checks).
bool ClaimFilesPresent(const std::vector<ClaimFile>& files);

// Removes the paths (files, and folders with what is in them); a path already gone is fine.
Status RemoveClaimFiles(const ClaimFileDirs& dirs, const std::vector<std::filesystem::path>& paths);

// Unprepare: removes the claim's files (ClaimPaths), and what the plugin's earlier versions left
// of this uid at OldLayoutMetadataDir: each request folder whose metadata.json names the claim's
// uid (metadata.uid), then that folder if nothing else is in it. A request folder of another
// uid, or whose metadata.json is missing or unreadable, stays (docs/dra.md). InvalidArgument,
// with nothing removed, when ClaimUidProblem names one; a path a request name would put
// elsewhere is left out.
Status RemoveClaimFilesOf(const ClaimFileDirs& dirs, const PreparedClaim& claim);

}  // namespace gfp::plugin::dra
