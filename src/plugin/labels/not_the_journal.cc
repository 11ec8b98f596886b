#include "plugin/labels/not_the_journal.h"

#include <sys/stat.h>

#include <array>
#include <string>

#include "common/text_escape.h"

namespace gfp::plugin::labels {
namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 4> kSuffixes = {"", "-wal", "-shm", "-journal"};

fs::path FolderOf(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

bool SameSpelling(const fs::path& labels, const fs::path& journal) {
  std::error_code ignored;
  const fs::path spelled = fs::absolute(labels, ignored).lexically_normal();
  for (const char* suffix : kSuffixes) {
    if (spelled == fs::absolute(journal.string() + suffix, ignored).lexically_normal()) {
      return true;
    }
  }
  return false;
}

// The same folder (symlinks followed) and a name of the journal's files.
bool SameFile(const fs::path& labels, const fs::path& journal) {
  const std::string name = labels.filename().string();
  bool companion = false;
  for (const char* suffix : kSuffixes) companion |= name == journal.filename().string() + suffix;
  if (!companion) return false;
  struct stat a {
  }, b{};
  if (::stat(FolderOf(labels).c_str(), &a) != 0) return false;
  if (::stat(FolderOf(journal).c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

Status CheckNotAJournalFile(const fs::path& labels, const fs::path& journal) {
  if (journal.empty() || (!SameSpelling(labels, journal) && !SameFile(labels, journal))) {
    return Status::Ok();
  }
  return InvalidArgument(
      "is the journal's own file (--journal=" + EscapeAndTruncate(journal.string(), 300) + ")");
}

}  // namespace gfp::plugin::labels
