#include "plugin/rpc/socket_guard.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

namespace gfp::plugin::rpc {

bool SocketIsLive(const std::filesystem::path& path) {
  sockaddr_un addr{};
  const std::string p = path.string();
  if (p.size() >= sizeof(addr.sun_path)) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return live;
}

Status CheckSocketPathFree(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Internal("cannot stat " + path.string() + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return FailedPrecondition(path.string() +
                              " exists and is not a socket; refusing to replace it");
  }
  if (SocketIsLive(path)) {
    return AlreadyExists("another server is answering on " + path.string() +
                         "; refusing to take over its socket (is a second plugin running?)");
  }
  return Status::Ok();
}

namespace {

constexpr std::string_view kPrefix = ".gfp";
constexpr std::string_view kFolderSuffix = ".d";
constexpr std::string_view kLegacySuffix = ".sock";  // bound directly in the folder (old versions)
constexpr const char* kSocketName = "grpc.sock";

std::string Reason() { return std::strerror(errno); }

// The pid in a name ".gfp<pid>.<n><suffix>", or 0 for any other name.
pid_t PidOfTemporaryName(std::string_view name, std::string_view suffix) {
  if (name.size() <= kPrefix.size() + suffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(suffix)) {
    return 0;
  }
  const std::string_view middle =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - suffix.size());
  const std::size_t dot = middle.find('.');
  if (dot == std::string_view::npos || dot + 1 == middle.size()) return 0;
  const std::string_view pid_text = middle.substr(0, dot);
  const std::string_view counter_text = middle.substr(dot + 1);
  pid_t pid = 0;
  unsigned counter = 0;
  const char* pid_end = pid_text.data() + pid_text.size();
  const char* counter_end = counter_text.data() + counter_text.size();
  const auto parsed_pid = std::from_chars(pid_text.data(), pid_end, pid);
  const auto parsed_counter = std::from_chars(counter_text.data(), counter_end, counter);
  const bool pid_ok = parsed_pid.ec == std::errc() && parsed_pid.ptr == pid_end && pid > 0;
  const bool counter_ok = parsed_counter.ec == std::errc() && parsed_counter.ptr == counter_end;
  return pid_ok && counter_ok ? pid : 0;
}

bool ProcessIsGone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

// Our own pid counts as gone: called before this process binds anything, such a file is from an
// earlier process with the same pid (pid 1 in every restart of a container).
bool LeftByAGoneProcess(pid_t pid) { return pid != 0 && (pid == ::getpid() || ProcessIsGone(pid)); }

// Unlinks `path` when it is a socket (not followed) on which nothing answers.
bool RemoveDeadSocket(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  if (SocketIsLive(path)) return false;
  return ::unlink(path.c_str()) == 0;
}

// A private bind folder: a real folder (lstat), emptied of a dead socket, then removed. rmdir
// fails on anything else left inside, which then stays.
bool RemoveStaleBindFolder(const std::filesystem::path& folder) {
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  RemoveDeadSocket(folder / kSocketName);
  return ::rmdir(folder.c_str()) == 0;
}

}  // namespace

Result<std::filesystem::path> MakePrivateBindPath(const std::filesystem::path& dir) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path folder =
      dir / (std::string(kPrefix) + std::to_string(::getpid()) + "." + std::to_string(++counter) +
             std::string(kFolderSuffix));
  if (::mkdir(folder.c_str(), 0700) != 0) {
    return Internal("cannot create the private folder " + folder.string() +
                    " to bind a socket in: " + Reason());
  }
  // The umask can only have removed bits; the owner needs all three (root ignores them anyway).
  if (::chmod(folder.c_str(), 0700) != 0) {
    const std::string why = Reason();
    ::rmdir(folder.c_str());
    return Internal("cannot set mode 0700 on " + folder.string() + ": " + why);
  }
  return folder / kSocketName;
}

std::vector<std::filesystem::path> RemoveStaleTemporarySockets(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (LeftByAGoneProcess(PidOfTemporaryName(name, kFolderSuffix))) {
      if (RemoveStaleBindFolder(entry.path())) removed.push_back(entry.path());
    } else if (LeftByAGoneProcess(PidOfTemporaryName(name, kLegacySuffix))) {
      if (RemoveDeadSocket(entry.path())) removed.push_back(entry.path());
    }
  }
  return removed;
}

Status InstallSocket(const std::filesystem::path& bound, const std::filesystem::path& target) {
  if (::chmod(bound.c_str(), 0600) != 0) {
    return Internal("cannot set mode 0600 on " + bound.string() + ": " + Reason());
  }
  GFP_RETURN_IF_ERROR(CheckSocketPathFree(target));
  if (::rename(bound.c_str(), target.c_str()) != 0) {
    return Internal("cannot move socket " + bound.string() + " to " + target.string() + ": " +
                    Reason());
  }
  ::rmdir(bound.parent_path().c_str());
  return Status::Ok();
}

void RemovePrivateBindPath(const std::filesystem::path& bound) {
  ::unlink(bound.c_str());
  ::rmdir(bound.parent_path().c_str());
}

std::optional<FileIdentity> IdentityOf(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{
      static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
      static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

}  // namespace gfp::plugin::rpc
