// Files a config names (CA, client certificate and key, token), read without blocking on a FIFO
// and with a size cap, as everything the plugin reads from outside.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::apiserver {

// A CA bundle is the largest thing named (a few hundred KiB at most).
inline constexpr std::size_t kMaxReferencedFileBytes = 1024 * 1024;
// Service account tokens are about 1 KiB.
inline constexpr std::size_t kMaxTokenFileBytes = 64 * 1024;

// `written` as a kubeconfig holds it: an absolute path, or one relative to the kubeconfig's
// folder (`base_dir`), as kubectl resolves it, not to the plugin's working directory.
std::filesystem::path ResolveAgainst(const std::filesystem::path& base_dir,
                                     std::string_view written);

// The whole file, or "<what> <path> cannot be read: <reason>" (not a regular file, too large,
// the OS's reason).
Result<std::string> ReadReferencedFile(const std::filesystem::path& path, const std::string& what,
                                       std::size_t max_bytes = kMaxReferencedFileBytes);

// The bearer token in `path`, surrounding whitespace removed (as client-go does), checked with
// CheckBearerToken. Called when a config is loaded and again whenever the file changes.
Result<std::string> ReadTokenFile(const std::filesystem::path& path);

}  // namespace gfp::adapters::apiserver
