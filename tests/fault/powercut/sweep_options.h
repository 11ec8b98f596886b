// Knobs of the sweeps, from the environment (defaults: the CI-sized run).
//   GFP_POWERCUT_SEED=<n>    first workload seed (default 1)
//   GFP_POWERCUT_SEEDS=<n>   how many seeds from it
//   GFP_POWERCUT_POINTS=<n>|all   per seed, at most n cut (or fault) points, evenly spread
//                            over the workload; "all": every point
//   GFP_POWERCUT_STEPS=<n>   steps per workload (default 14; longer ones by hand)
//   GFP_POWERCUT_CUT=<p>     only this point (with GFP_POWERCUT_SEED: replays one failure)
//   GFP_POWERCUT_BUDGET_S=<s> time box per sweep (default 150; 0: none): a sweep that
//                            reaches it stops early, says so and passes with what it ran
//   GFP_POWERCUT_LOG=1       the plugin's own log
//   GFP_FAULT_TMPDIR=<dir>   where the runs' files go (default /dev/shm when it is writable,
//                            else $TMPDIR or /tmp: durability is simulated, so a RAM disk
//                            loses nothing and is ~20x faster than a loaded disk)
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "common/sanitizer_build.h"

namespace gfp::faulttest {

inline std::uint64_t EnvU64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  if (std::string(v) == "all") return std::numeric_limits<std::uint64_t>::max();
  return std::strtoull(v, nullptr, 10);
}

// Sanitizer builds (Debug, ASan+UBSan: about 8x slower) run a smaller default sweep: they look
// for memory errors on the same paths, while the release build carries the >= 1,000 cut points.
using gfp::testing::kSanitizerBuild;

// The sweep's time box (CI must stay bounded even on a slow disk without /dev/shm).
class TimeBox {
 public:
  TimeBox()
      : begin_(std::chrono::steady_clock::now()), budget_(EnvU64("GFP_POWERCUT_BUDGET_S", 150)) {}
  // True (once printing a note) when the budget is spent.
  bool Spent() {
    if (budget_ == 0 || elapsed_ms() < static_cast<long long>(budget_) * 1000) return false;
    if (!noted_)
      std::printf("time box of %llu s reached: the sweep stops early\n",
                  static_cast<unsigned long long>(budget_));
    noted_ = true;
    return true;
  }
  long long elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 begin_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point begin_;
  std::uint64_t budget_;
  bool noted_ = false;
};

inline int WorkloadSteps() { return static_cast<int>(EnvU64("GFP_POWERCUT_STEPS", 14)); }

// A fresh directory per run under the sweep's base directory, removed afterwards (kept when
// KEEP_TEST_DIRS is set).
class RunDir {
 public:
  RunDir() {
    std::string pattern = Base() + "/gfp-fault-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~RunDir() {
    std::error_code ignored;
    if (!path_.empty() && std::getenv("KEEP_TEST_DIRS") == nullptr) {
      std::filesystem::remove_all(path_, ignored);
    }
  }
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  static std::string Base() {
    if (const char* dir = std::getenv("GFP_FAULT_TMPDIR"); dir != nullptr && *dir != '\0') {
      return dir;
    }
    if (::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
    const char* tmp = std::getenv("TMPDIR");
    return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::filesystem::path path_;
};

struct SweepOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1;
  std::uint64_t points_per_seed = 0;
  std::uint64_t only_point = 0;  // 0: the sweep

  static SweepOptions FromEnv(std::uint64_t default_seeds, std::uint64_t default_points) {
    SweepOptions o;
    o.first_seed = EnvU64("GFP_POWERCUT_SEED", 1);
    o.seeds = EnvU64("GFP_POWERCUT_SEEDS", default_seeds);
    o.points_per_seed = EnvU64("GFP_POWERCUT_POINTS", default_points);
    o.only_point = EnvU64("GFP_POWERCUT_CUT", 0);
    return o;
  }

  // The points (1-based) to try out of `total`: all of them, or `points_per_seed` evenly spread
  // with a seeded offset, so that different seeds cover different points.
  std::vector<std::uint64_t> Pick(std::uint64_t total, std::uint64_t seed) const {
    std::vector<std::uint64_t> out;
    if (only_point != 0) {
      if (only_point <= total) out.push_back(only_point);
      return out;
    }
    if (total <= points_per_seed) {
      for (std::uint64_t p = 1; p <= total; ++p) out.push_back(p);
      return out;
    }
    const double stride = static_cast<double>(total) / static_cast<double>(points_per_seed);
    const double offset = static_cast<double>(seed % 997) / 997.0 * stride;
    for (std::uint64_t i = 0; i < points_per_seed; ++i) {
      out.push_back(1 + static_cast<std::uint64_t>(offset + stride * static_cast<double>(i)));
    }
    return out;
  }
};

}  // namespace gfp::faulttest
