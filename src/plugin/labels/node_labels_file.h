// `serve --node-labels-file` (SPEC §8.2): keeps the NFD local feature file in step with the free
// partitions of the node. Written atomically, when its text changes or someone else changed the
// file, never removed, never onto the journal.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "common/status.h"

namespace gfp::plugin::labels {

// File names longer than this are refused at start (the temporary name adds ".tmp"; NAME_MAX is
// 255); whole paths longer than kMaxNodeLabelsPathLength too.
inline constexpr std::size_t kMaxNodeLabelsNameLength = 200;
inline constexpr std::size_t kMaxNodeLabelsPathLength = 4000;

// serve's start-up check of the path, without side effects. Refuses: a value too long or whose
// file name is empty, ".", "..", too long or starts with '.' (NFD ignores hidden files); a path
// that exists and is a symlink (a rename would replace the link, not its target: give the real
// path) or anything but a regular file; a parent folder that is missing, not a folder, or not
// writable. Messages read after the flag: "is a symbolic link (…)", ": folder /d does not
// exist (…)".
Status CheckNodeLabelsPath(const std::filesystem::path& path);

class NodeLabelsFile {
 public:
  using Clock = std::chrono::steady_clock;
  // A failed write is tried again at most this often (a full disk is not hammered every turn).
  static constexpr std::chrono::seconds kRetryEvery{1};

  // `journal` (may be empty) is never written: see CheckNotAJournalFile.
  NodeLabelsFile(std::filesystem::path path, std::filesystem::path journal)
      : path_(std::move(path)), journal_(std::move(journal)) {}

  // `free_by_size` is sm::FreePartitionsBySize's answer. Empty (Fabric Manager's table not known
  // yet) writes nothing: a file left by the previous run stays (docs/scheduling.md says why).
  // Otherwise writes the file when its text differs from the last one written, or when the file
  // is no longer the one written (removed, replaced or edited: its inode, size or mtime
  // changed). A failure is logged once per change of reason, retried, never fatal; the recovery
  // is logged too.
  void Update(const std::map<std::size_t, std::size_t>& free_by_size, Clock::time_point now);

  // The last failure's message; empty while writing works.
  const std::string& problem() const { return problem_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  // What lstat showed right after the last write; another value means someone else's hand.
  struct Identity {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec mtime{};
    bool operator==(const Identity& o) const;
  };
  static std::optional<Identity> IdentityOf(const std::filesystem::path& path);
  bool StillAsWritten(const std::string& text);
  Status Write(const std::string& text);

  std::filesystem::path path_;
  std::filesystem::path journal_;
  std::optional<std::string> written_;  // the text in the file, once this process wrote it
  std::optional<Identity> written_identity_;
  std::string problem_;
  Clock::time_point next_retry_{};
};

}  // namespace gfp::plugin::labels
