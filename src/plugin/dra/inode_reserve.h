// Inodes made ahead, while no Prepare runs, for the next first Prepare's staged files
// (StagedClaimFiles). Making an inode can be slow: on ext4 without a journal, the kernel skips
// every inode of the group freed in the last minutes (recently_deleted() in fs/ext4/ialloc.c), so
// after many claims came and went the 14 inodes of a 4-GPU claim took 1.9 ms to make, longer
// than the saga the staging overlaps (docs/dra.md). Made in idle time they cost the
// Prepare nothing.
//
// Every inode is new and was never seen by anyone: nothing a claim had is reused (a file a
// tenant's container had could still be open there). Each is:
//   - an empty folder, mode 0755, in the private staging folder (ClaimStagingDir), named
//     spare.XXXXXX: a claim's metadata folder or one of its request folders;
//   - an unnamed file (O_TMPFILE) in the staging folder: a request's metadata.json;
//   - an unnamed file in the CDI folder: a CDI spec.
// Not thread-safe: the stager's thread alone uses it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "plugin/dra/claim_files.h"

namespace gfp::plugin::dra {

struct ReserveSize {
  std::size_t folders = 0;
  std::size_t staging_files = 0;
  std::size_t cdi_files = 0;

  // Enough for a claim of `gpus` GPUs in as many requests: its metadata folder and one folder
  // per request, one metadata.json per request, one CDI spec per request and the GPUs' spec.
  static ReserveSize ForClaimOf(std::size_t gpus) { return {gpus + 1, gpus, gpus + 1}; }
};

class InodeReserve {
 public:
  InodeReserve(ClaimFileDirs dirs, ReserveSize size) : dirs_(std::move(dirs)), size_(size) {}
  ~InodeReserve();  // removes its folders; its unnamed files go with their descriptors
  InodeReserve(const InodeReserve&) = delete;
  InodeReserve& operator=(const InodeReserve&) = delete;

  // Tops the reserve up to its size, one inode at a time until `interrupted` says a Prepare
  // waits (it is asked before each). What cannot be made (a missing base folder, a full disk) is
  // left out, and the first reason returned; the Prepare then makes it as it would without a
  // reserve.
  Status Refill(const std::function<bool()>& interrupted = [] { return false; });
  bool Full() const;

  // An empty folder (mode 0755) in the staging folder, to rename or fill; none when used up.
  std::optional<std::filesystem::path> TakeFolder();
  // An unnamed file in the staging folder, for UnnamedFile::WriteInto.
  std::optional<UniqueFd> TakeStagingFile();
  // An unnamed file in the CDI folder.
  std::optional<UniqueFd> TakeCdiFile();

 private:
  ClaimFileDirs dirs_;
  ReserveSize size_;
  std::vector<std::filesystem::path> folders_;
  std::vector<UniqueFd> staging_files_;
  std::vector<UniqueFd> cdi_files_;
};

}  // namespace gfp::plugin::dra
