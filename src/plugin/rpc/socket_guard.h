// Unix socket housekeeping for the plugin's endpoints.
//
// gRPC unlinks a Unix socket path before it binds it and again when its listener shuts down, so
// a server bound directly on <device-plugin-dir>/kubevirt-<NAME>.sock would delete a live
// foreign server's socket. Ours are therefore bound on a private temporary name below the same
// directory (MakePrivateBindPath) and moved onto the real path (InstallSocket) only after
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

// Where gRPC binds a socket that will be moved into `dir`: <dir>/.gfp<pid>.<n>.d/grpc.sock, in a
// folder this call creates with mode 0700. gRPC creates the socket under the process umask and
// it is made 0600 only afterwards; inside the private folder nobody else can reach it in between
// (a connection made in that window would stay open). The name is unique in this process and
// short enough for sun_path. Errors name the folder and the reason.
Result<std::filesystem::path> MakePrivateBindPath(const std::filesystem::path& dir);

// Removes what a plugin process killed between binding and InstallSocket left in `dir`: private
// bind folders (MakePrivateBindPath) and the bare .gfp<pid>.<n>.sock names of earlier versions,
// whose process is gone (or has this process's pid: call it before this process binds any) and on
// whose socket nothing answers. Symlinks are never followed; nothing else is touched. Returns the
// paths removed.
std::vector<std::filesystem::path> RemoveStaleTemporarySockets(const std::filesystem::path& dir);

// Gives the socket bound at `bound` (a MakePrivateBindPath) mode 0600 (only root's kubelet
// connects; the umask must not decide), renames it onto `target` once CheckSocketPathFree(target)
// allows it (a stale socket there is replaced atomically), then removes the private folder. On
// error `bound` is left as it is (RemovePrivateBindPath removes it).
Status InstallSocket(const std::filesystem::path& bound, const std::filesystem::path& target);

// Removes a MakePrivateBindPath: the socket if still there, then its folder.
void RemovePrivateBindPath(const std::filesystem::path& bound);

// Identity of a file (device + inode + change time), to notice it being re-created.
struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> IdentityOf(const std::filesystem::path& path);

}  // namespace gfp::plugin::rpc
