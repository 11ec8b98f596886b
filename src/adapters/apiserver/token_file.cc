#include "adapters/apiserver/token_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "adapters/host/file_reading.h"

namespace gfp::adapters::apiserver {
namespace {

constexpr std::size_t kMaxTokenBytes = 64 * 1024;

std::string Trimmed(const std::string& text) {
  const char* kSpace = " \t\r\n";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

}  // namespace

Result<std::string> TokenFile::Token() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    return Unavailable("token file " + path_.string() + ": " + std::strerror(errno));
  }
  const Identity now{
      st.st_dev, st.st_ino, st.st_size,
      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  std::lock_guard lock(mu_);
  if (read_ && *read_ == now) return token_;
  auto text = host::ReadWholeFile(path_, kMaxTokenBytes);
  if (!text.ok()) return text.status().WithContext("token file " + path_.string());
  std::string token = Trimmed(*text);
  if (token.empty()) return Unavailable("token file " + path_.string() + " is empty");
  ++reads_;
  // Kept only after a successful read, so a file caught half-written is read again next time.
  read_ = now;
  token_ = std::move(token);
  return token_;
}

int TokenFile::reads() const {
  std::lock_guard lock(mu_);
  return reads_;
}

}  // namespace gfp::adapters::apiserver
