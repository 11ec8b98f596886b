// Grows a booted journal with realistic allocation cycles, fast: decided against the replayed
// state and appended in batches, as Engine::Execute encodes them, with snapshots at the engine's
// cadence. Shared by bench_plugin (cold start) and bench_history (10 M-event queries).
#pragma once

#include <cstdint>
#include <filesystem>

namespace gfp::bench {

struct GrowOptions {
  std::uint64_t batch = 1000;                  // events per Append transaction
  std::uint64_t snapshot_every = 10'000;       // as EngineOptions::snapshot_every
  std::uint64_t snapshots_kept = 3;            // as EngineOptions::snapshots_kept
  std::int64_t micros_per_cycle = 25'000'000;  // between allocations: 10 M events span a year
};

// Appends allocation cycles (allocate a random partition, pod bound, released and deactivated)
// to the journal at `path`, whose events must already describe a node with partitions, until it
// holds about `events` events. Ends with nothing active, like FM. Dies with a message on any
// failure.
struct GrowResult {
  std::uint64_t last_seq = 0;
  std::uint64_t cycles = 0;  // allocations granted and released
};
GrowResult GrowJournal(const std::filesystem::path& path, std::uint64_t events,
                       const GrowOptions& options = {});

}  // namespace gfp::bench
