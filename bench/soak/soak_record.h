// What one soak run (bench_soak) records, and how it is judged and reported: Allocate latency by
// decile of the run, /proc samples of serve at each decile, each restart of serve, each FM
// restart, the journal's growth and `journal verify` on the final journal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/common/proc_sample.h"

namespace gfp::bench::soak {

// Flat means the last decile's sample is within these of the first decile's.
inline constexpr double kRssGrowthLimitPercent = 10;  // SQLite's page cache and heap settling
// FDs and threads are the fewest of a few samples at rest. A leak grows with the cycles (one per
// 1,000 cycles is +100 over 100,000), while gRPC's synchronous server starts and ends worker
// threads with demand (12 to 14 seen at rest in one run): threads get a margin, FDs none.
inline constexpr int kFdGrowthLimit = 0;
inline constexpr int kThreadGrowthLimit = 2;
inline constexpr double kLatencyLimitRatio = 1.10;  // last-decile median / first-decile median

struct DecileSample {
  std::uint64_t cycles_done = 0;     // cycles of the run finished when sampled
  std::uint64_t process_cycles = 0;  // of those, served by the process sampled (restarts)
  ProcSample proc;
  std::uintmax_t journal_bytes = 0;  // journal db + -wal (up to ~4 MiB of -wal before a checkpoint)
  std::uint64_t journal_events = 0;  // the journal's last seq
};

struct RestartSample {
  std::uint64_t cycle = 0;           // restarted before this cycle
  std::uint64_t journal_events = 0;  // the journal it replayed
  double registered_ms = 0;          // exec to registered, every device Healthy
  double recovered_ms = 0;           // serve's own "recovered in" (NaN when not logged)
};

struct SoakRecord {
  std::uint64_t cycles = 0;
  std::vector<std::vector<double>> latency_us_by_decile = std::vector<std::vector<double>>(10);
  std::vector<DecileSample> samples;  // [0] right after the first start, then one per decile
  std::vector<RestartSample> restarts;
  std::vector<double> fm_resync_ms;        // FM restarted (resiliency) until serve resynced it
  int activation_faults = 0;               // FM activations made to fail
  int activation_faults_refused = 0;       // of those, Allocate refused as expected
  std::uintmax_t final_journal_bytes = 0;  // after serve's clean exit: -wal checkpointed
  double verify_seconds = 0;
  double wall_seconds = 0;

  std::uintmax_t JournalGrowth() const {
    return final_journal_bytes - samples.front().journal_bytes;
  }
};

// The decile table, the restart table, the verdict rows; then the figures (FigureSet).
void ReportSoak(const SoakRecord& record);

}  // namespace gfp::bench::soak
