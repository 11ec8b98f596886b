// A bearer token kept in a file that rotates (projected service-account tokens are replaced
// about hourly, SPEC §11): re-read whenever the file is not the one last read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"

namespace gfp::adapters::apiserver {

class TokenFile {
 public:
  explicit TokenFile(std::filesystem::path path) : path_(std::move(path)) {}

  // The token (surrounding whitespace trimmed), read again when the file's device, inode, size
  // or modification time changed since the last read. Errors name the file.
  Result<std::string> Token();

  // How many times the file was read, for tests of the change detection.
  int reads() const;

 private:
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Identity&) const = default;
  };

  std::filesystem::path path_;
  mutable std::mutex mu_;
  std::optional<Identity> read_;  // the identity of the file token_ came from
  std::string token_;
  int reads_ = 0;
};

}  // namespace gfp::adapters::apiserver
