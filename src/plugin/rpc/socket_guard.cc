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

std::filesystem::path TemporarySocketPath(const std::filesystem::path& dir) {
  static std::atomic<unsigned> counter{0};
  return dir / (".gfp" + std::to_string(::getpid()) + "." + std::to_string(++counter) + ".sock");
}

namespace {

// The pid in a TemporarySocketPath name (".gfp<pid>.<n>.sock"), or 0 for any other name.
pid_t PidOfTemporarySocketName(std::string_view name) {
  constexpr std::string_view kPrefix = ".gfp", kSuffix = ".sock";
  if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
      !name.ends_with(kSuffix)) {
    return 0;
  }
  const std::string_view middle =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
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

}  // namespace

std::vector<std::filesystem::path> RemoveStaleTemporarySockets(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const pid_t pid = PidOfTemporarySocketName(entry.path().filename().string());
    // Our own pid counts as gone: called before this process binds anything, such a file is
    // from an earlier process with the same pid (pid 1 in every restart of a container).
    if (pid == 0 || (pid != ::getpid() && !ProcessIsGone(pid))) continue;
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (SocketIsLive(entry.path())) continue;
    if (::unlink(entry.path().c_str()) == 0) removed.push_back(entry.path());
  }
  return removed;
}

Status InstallSocket(const std::filesystem::path& bound, const std::filesystem::path& target) {
  if (::chmod(bound.c_str(), 0600) != 0) {
    return Internal("cannot set mode 0600 on " + bound.string() + ": " + std::strerror(errno));
  }
  GFP_RETURN_IF_ERROR(CheckSocketPathFree(target));
  if (::rename(bound.c_str(), target.c_str()) != 0) {
    return Internal("cannot move socket " + bound.string() + " to " + target.string() + ": " +
                    std::strerror(errno));
  }
  return Status::Ok();
}

std::optional<FileIdentity> IdentityOf(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{
      static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
      static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

}  // namespace gfp::plugin::rpc
