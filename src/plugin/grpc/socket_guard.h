// Unix socket housekeeping for the plugin's endpoints.
#pragma once

#include <filesystem>
#include <optional>

#include "common/status.h"

namespace gfp::plugin {

// True when something accepts connections on the Unix socket at `path` right now.
bool SocketIsLive(const std::filesystem::path& path);

// Prepares `path` for our server: a stale socket file is removed; a socket a live server answers
// on is never taken over (AlreadyExists naming it); any other kind of file is an error.
Status ClaimSocketPath(const std::filesystem::path& path);

// Identity of a file (device + inode + change time), to notice it being re-created.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> IdentityOf(const std::filesystem::path& path);

}  // namespace gfp::plugin
