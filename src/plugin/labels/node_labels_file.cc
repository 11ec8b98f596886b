#include "plugin/labels/node_labels_file.h"

#include <spdlog/spdlog.h>

#include "adapters/host/atomic_file.h"
#include "common/text_escape.h"
#include "plugin/labels/node_labels.h"
#include "plugin/labels/not_the_journal.h"
#include "statemachine/free_partitions.h"

namespace gfp::plugin::labels {

bool NodeLabelsFile::Identity::operator==(const Identity& o) const {
  return device == o.device && inode == o.inode && size == o.size &&
         mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
}

std::optional<NodeLabelsFile::Identity> NodeLabelsFile::IdentityOf(
    const std::filesystem::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  return Identity{info.st_dev, info.st_ino, info.st_size, info.st_mtim};
}

bool NodeLabelsFile::StillAsWritten(const std::string& text) {
  if (written_ != text || !written_identity_) return false;
  if (IdentityOf(path_) == written_identity_) return true;
  spdlog::warn("node labels file {} was removed or changed by someone else; writing it again",
               EscapeAndTruncate(path_.string(), 300));
  written_identity_.reset();  // said once; a failing rewrite is logged as a problem
  return false;
}

Status NodeLabelsFile::Write(const std::string& text) {
  const Status not_journal = CheckNotAJournalFile(path_, journal_);
  if (!not_journal.ok()) {
    return Status(not_journal.code(), "node labels file " + EscapeAndTruncate(path_.string(), 300) +
                                          " " + not_journal.message() + ": not written");
  }
  GFP_RETURN_IF_ERROR(adapters::host::ReplaceFileAtomically(path_, text));
  written_identity_ = IdentityOf(path_);
  return Status::Ok();
}

void NodeLabelsFile::Update(const std::map<std::size_t, std::size_t>& free_by_size,
                            Clock::time_point now) {
  if (free_by_size.empty()) return;
  std::string text = FormatNodeLabels(free_by_size);
  if (!problem_.empty() && now < next_retry_) return;
  if (StillAsWritten(text)) return;
  const Status status = Write(text);
  if (status.ok()) {
    const std::string shown = EscapeAndTruncate(path_.string(), 300);
    const std::size_t largest = sm::LargestFreePartition(free_by_size);
    if (!problem_.empty()) {
      spdlog::info("node labels file {} written again", shown);
    } else if (!written_) {
      spdlog::info("node labels file {} written (largest free partition: {} GPUs)", shown, largest);
    } else {
      spdlog::debug("node labels file {} updated (largest free partition: {} GPUs)", shown,
                    largest);
    }
    written_ = std::move(text);
    problem_.clear();
    return;
  }
  next_retry_ = now + kRetryEvery;
  if (status.message() == problem_) return;
  problem_ = status.message();
  spdlog::warn("{} (the node labels are stale; retrying every {} s)", problem_,
               kRetryEvery.count());
}

}  // namespace gfp::plugin::labels
