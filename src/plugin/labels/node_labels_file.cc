#include "plugin/labels/node_labels_file.h"

#include <spdlog/spdlog.h>

#include "adapters/host/atomic_file.h"
#include "common/text_escape.h"
#include "plugin/labels/node_labels.h"
#include "statemachine/free_partitions.h"

namespace gfp::plugin::labels {

void NodeLabelsFile::Update(const std::map<std::size_t, std::size_t>& free_by_size,
                            Clock::time_point now) {
  if (free_by_size.empty()) return;
  std::string text = FormatNodeLabels(free_by_size);
  if (written_ == text) return;
  if (!problem_.empty() && now < next_retry_) return;
  const Status status = adapters::host::ReplaceFileAtomically(path_, text);
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
