// Shared by the fuzz targets: quiet logs, a per-process scratch directory on tmpfs, and a small
// reader that turns fuzz bytes into choices.
#pragma once

#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace gfp::fuzz {

// Protobuf's "invalid UTF-8" complaints and the project's own logs would drown the fuzzer's
// output and cost most of each iteration.
inline void QuietLogs() {
  google::protobuf::SetLogHandler(nullptr);
  spdlog::set_level(spdlog::level::off);
}

// A directory for this process, on /dev/shm when there is one (no disk I/O, cheap fsync);
// $GFP_FUZZ_TMP overrides. Removed at a normal exit unless $GFP_FUZZ_KEEP is set (to look at
// what the last input built).
class ScratchDir {
 public:
  explicit ScratchDir(const char* what) {
    const char* base = std::getenv("GFP_FUZZ_TMP");
    std::string root =
        base ? base : (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    std::string pattern = root + "/gfp-fuzz-" + what + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    if (std::getenv("GFP_FUZZ_KEEP")) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Consumes fuzz bytes front to back; reads past the end give zeros / empty strings.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  std::uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // One of n choices (n > 0).
  std::size_t Pick(std::size_t n) { return Byte() % n; }
  // A length-prefixed string of at most max_len bytes.
  std::string String(std::size_t max_len) {
    std::size_t len = Byte() % (max_len + 1);
    if (len > size_ - pos_) len = pos_ < size_ ? size_ - pos_ : 0;
    std::string out(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace gfp::fuzz
