// Unix socket housekeeping for the plugin's endpoints.
//
// gRPC unlinks a Unix socket path before it binds it and again when its listener shuts down, so
// a server bound directly on <device-plugin-dir>/kubevirt-<NAME>.sock would delete a live
// foreign server's socket. Ours are therefore bound on a private temporary name in the same
// directory (TemporarySocketPath) and moved onto the real path (InstallSocket) only after
// checking that no live server answers there; gRPC's own unlinks then hit only the temporary
// name, and we remove the real path ourselves only while it is still the file we installed.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "common/status.h"

namespace gfp::plugin::rpc {

// True when something accepts connections on the Unix socket at `path` right now.
bool SocketIsLive(const std::filesystem::path& path);

// Whether our server may be installed at `path`: nothing there or a stale socket is fine; a
// socket a live server answers on is never taken over (AlreadyExists naming it); any other kind
// of file is an error. Changes nothing.
Status CheckSocketPathFree(const std::filesystem::path& path);

// A name in `dir` that no other server of this process uses, short enough for sun_path.
std::filesystem::path TemporarySocketPath(const std::filesystem::path& dir);

// Removes the temporary sockets (TemporarySocketPath names) in `dir` that a plugin process left
// behind when it was killed between binding and InstallSocket: those on which nothing answers and
// whose process is gone (or has this process's pid: call it before this process binds any).
// Returns the paths removed. Never touches any other file.
std::vector<std::filesystem::path> RemoveStaleTemporarySockets(const std::filesystem::path& dir);

// Gives the socket bound at `bound` mode 0600 (only root's kubelet connects; the umask must not
// decide) and renames it onto `target` once CheckSocketPathFree(target) allows it (a stale
// socket there is replaced atomically). On error `bound` is left as it is.
Status InstallSocket(const std::filesystem::path& bound, const std::filesystem::path& target);

// Identity of a file (device + inode + change time), to notice it being re-created.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> IdentityOf(const std::filesystem::path& path);

}  // namespace gfp::plugin::rpc
