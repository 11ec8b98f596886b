#include "bench/common/journal_commit.h"

#include <chrono>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "store/journal.h"

namespace gfp::bench {
namespace {

// The two events of an Allocate's first commit for a 2-GPU partition, as serve writes them.
std::vector<events::Event> IntentOf(int n) {
  const std::string id = "alloc-" + std::to_string(n);
  const std::int64_t now = 1'780'000'000'000'000 + n;
  events::Event requested;
  requested.set_time_unix_micros(now);
  auto* r = requested.mutable_allocation_requested();
  r->set_allocation_id(id);
  r->set_resource("nvidia.com/GH100_H100_SXM5_80GB");
  r->add_device_ids("0000:1b:00.0");
  r->add_device_ids("0000:43:00.0");
  events::Event activation;
  activation.set_time_unix_micros(now);
  auto* a = activation.mutable_partition_activation_requested();
  a->set_partition_id(3);
  a->set_allocation_id(id);
  a->set_reason("activation requested for " + id);
  return {requested, activation};
}

}  // namespace

JournalCommit::JournalCommit(const std::filesystem::path& path) {
  auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
  if (!journal.ok()) Die(journal.status().message());
  journal_ = std::move(journal).value();
}

JournalCommit::~JournalCommit() = default;

double JournalCommit::One() {
  std::vector<store::NewEvent> batch;
  for (const events::Event& e : IntentOf(++next_)) {
    batch.push_back(
        {e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e), sm::EventSubjects(e)});
  }
  const auto start = std::chrono::steady_clock::now();
  auto appended = journal_->Append(batch);
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (!appended.ok()) Die(appended.status().message());
  return us;
}

}  // namespace gfp::bench
