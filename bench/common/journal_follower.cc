#include "bench/common/journal_follower.h"

#include <thread>

#include "bench/bench_report.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "store/journal.h"

namespace gfp::bench {

JournalFollower::JournalFollower(const std::filesystem::path& path) {
  auto journal = store::Journal::Open(path, store::OpenMode::kReadOnly);
  if (!journal.ok()) Die(journal.status().message());
  journal_ = std::move(journal).value();
  auto state = engine::Replay(*journal_, 0, /*use_snapshots=*/true, false);
  if (!state.ok()) Die(state.status().message());
  state_ = std::move(state).value();
}

JournalFollower::~JournalFollower() = default;

std::vector<std::int64_t> JournalFollower::Poll() {
  std::vector<std::int64_t> times;
  auto apply = [&](const store::StoredEvent& e) {
    auto event = sm::DecodeEvent(e.type, e.time_unix_micros, e.payload);
    if (!event.ok()) return event.status();
    sm::Apply(state_, e.seq, *event);
    times.push_back(e.time_unix_micros);
    return Status::Ok();
  };
  if (auto read = journal_->ForEach(state_.last_seq + 1, 0, apply); !read.ok()) {
    Die("reading the journal: " + read.message());
  }
  return times;
}

bool JournalFollower::WaitUntilReleased(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (Poll(); !state_.allocations.empty() || !state_.active.empty() || !state_.intents.empty();
       Poll()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void JournalFollower::PartitionsBySize(std::vector<std::vector<std::string>>& ones,
                                       std::vector<std::vector<std::string>>& twos) const {
  for (const auto& [pid, p] : state_.partitions) {
    auto devices = sm::DevicesOfPartition(state_, p);
    if (!devices.missing_reason.empty()) continue;
    if (devices.bdfs.size() == 1) ones.push_back(devices.bdfs);
    if (devices.bdfs.size() == 2) twos.push_back(devices.bdfs);
  }
  if (ones.empty() || twos.empty()) Die("the H100 table has no 1- or 2-GPU partitions");
}

}  // namespace gfp::bench
