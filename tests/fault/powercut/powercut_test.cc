// Power-cut sweep (issue 11 §1). For each seeded workload: count its I/O points (xWrite and
// xSync through the fault VFS) in a run without faults, then replay it with the power cut at each
// point (or an even sample of them), alternating how un-synced writes are lost or torn and
// whether FM loses its partitions with the node; reboot and check with RebootAndCheck that no
// acknowledged decision is lost, the journal verifies and replays, and recovery converges.
//
// Reproduce a failure with the line it prints:
//   GFP_POWERCUT_SEED=<s> GFP_POWERCUT_SEEDS=1 GFP_POWERCUT_CUT=<p> ./fault_powercut_test
// A long run by hand: GFP_POWERCUT_SEEDS=<n> GFP_POWERCUT_POINTS=all (see sweep_options.h).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>

#include "common/fault_vfs.h"
#include "fault/powercut/recovery_check.h"
#include "fault/powercut/sweep_options.h"
#include "fault/powercut/workload.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;

// CI size: every cut point of 8 workloads (1,158 cut points; 3 workloads in sanitizer builds).
constexpr std::uint64_t kCiPowerCutSeeds = kSanitizerBuild ? 3 : 8;
constexpr std::uint64_t kCiPointsPerSeed = 300;

class PowerCutSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("GFP_POWERCUT_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
    ASSERT_EQ(fault::InstallFaultVfs(), "");
  }
};

fault::CutMode ModeFor(std::uint64_t seed, std::uint64_t point) {
  static const fault::CutMode kModes[] = {fault::CutMode::kDiscardUnsynced,
                                          fault::CutMode::kTearLast,
                                          fault::CutMode::kKeepPendingTearLast};
  return kModes[(seed + point) % 3];
}

// FM keeps its partitions (only the plugin's storage lost power) or loses them with the node.
bool FmLosesPartitions(std::uint64_t seed, std::uint64_t point) { return (seed + point / 3) % 2; }

// One run without faults: its point count, and the same checks after a plain crash.
std::uint64_t CountPoints(std::uint64_t seed) {
  RunDir dir;
  fault::ResetFaultVfs();
  Workload w(seed, dir.path(), WorkloadSteps());
  Status ran = w.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  const std::uint64_t points = fault::Counters().points();
  const RecoveryOutcome crash = RebootAndCheck(w, Reboot{});
  EXPECT_EQ(crash.failure, "") << "seed " << seed << " without a cut";
  EXPECT_GT(crash.decisions, 0u) << "seed " << seed << " acknowledged nothing";
  return points;
}

TEST_F(PowerCutSweep, EveryAcknowledgedDecisionSurvivesACutAtEachPoint) {
  const SweepOptions options = SweepOptions::FromEnv(kCiPowerCutSeeds, kCiPointsPerSeed);
  TimeBox box;
  std::uint64_t cuts = 0, decisions = 0, lost = 0, failures = 0, total_points = 0;
  std::uint64_t double_cuts = 0;
  for (std::uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    const std::uint64_t points = CountPoints(seed);
    total_points += points;
    for (const std::uint64_t point : options.Pick(points, seed)) {
      if (box.Spent()) break;
      RunDir dir;
      fault::ResetFaultVfs();
      const fault::CutMode mode = ModeFor(seed, point);
      fault::ArmPowerCut(point, mode, seed * 7919 + point);
      Workload w(seed, dir.path(), WorkloadSteps());
      Status ran = w.Run();
      ASSERT_TRUE(ran.ok()) << ran.message();
      const std::string where = w.Where();
      const bool cut = fault::PoweredOff();
      // Every third cut also cuts the power again during the recovery that follows.
      const std::uint64_t second_cut = point % 3 == 0 ? 1 + (seed * 31 + point) % 24 : 0;
      const RecoveryOutcome out =
          RebootAndCheck(w, {FmLosesPartitions(seed, point), second_cut, ModeFor(seed, point + 1)});
      double_cuts += out.second_cut_hit;
      ++cuts;
      decisions += out.decisions;
      lost += out.lost;
      if (!cut) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << ": the cut at point " << point << " of " << points
                      << " never happened (the workload is not deterministic)";
      }
      if (!out.failure.empty()) {
        ++failures;
        ADD_FAILURE() << "power cut at point " << point << " of " << points << " ("
                      << fault::CutModeName(mode) << ", during " << where << "): " << out.failure
                      << "\n  reproduce: GFP_POWERCUT_SEED=" << seed
                      << " GFP_POWERCUT_SEEDS=1 GFP_POWERCUT_CUT=" << point
                      << " ./fault_powercut_test --gtest_filter=PowerCutSweep.*";
      }
      if (failures >= 5) FAIL() << "stopping after 5 failures";
    }
  }
  const long long ms = box.elapsed_ms();
  std::printf(
      "power-cut sweep: %llu cut points (of %llu I/O points in %llu seeds; %llu also cut during "
      "the recovery), %llu acknowledged decisions checked, %llu acknowledged decisions lost, "
      "%lld ms\n",
      static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(total_points),
      static_cast<unsigned long long>(options.seeds), static_cast<unsigned long long>(double_cuts),
      static_cast<unsigned long long>(decisions), static_cast<unsigned long long>(lost),
      static_cast<long long>(ms));
  EXPECT_EQ(lost, 0u);
}

// After a failed sync or a full disk (one-shot), the power goes out later: the failed
// transaction's writes may still be pending in the page cache and reach the disk with a later
// sync or at the cut. What was acknowledged must still be exactly what is recovered.
TEST_F(PowerCutSweep, ACutAfterAnIoErrorLosesNothingAcknowledged) {
  const SweepOptions options = SweepOptions::FromEnv(kSanitizerBuild ? 1 : 2, 10);
  TimeBox box;
  std::uint64_t cuts = 0, decisions = 0, lost = 0, failures = 0;
  struct Fault {
    fault::IoOp op;
    int code;
  };
  const Fault kFaults[] = {{fault::IoOp::kSync, SQLITE_IOERR_FSYNC},
                           {fault::IoOp::kWrite, SQLITE_FULL}};
  for (std::uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    const fault::IoCounters counts = [&] {
      RunDir dir;
      fault::ResetFaultVfs();
      Workload w(seed, dir.path(), WorkloadSteps());
      EXPECT_TRUE(w.Run().ok());
      return fault::Counters();
    }();
    for (const Fault& f : kFaults) {
      SweepOptions faults = options;
      faults.only_point = 0;
      faults.points_per_seed = 6;
      for (const std::uint64_t nth : faults.Pick(counts.of(f.op), seed)) {
        std::uint64_t points = 0;
        {
          RunDir dir;
          fault::ResetFaultVfs();
          fault::ArmFault(f.op, nth, f.code, false);
          Workload w(seed, dir.path(), WorkloadSteps());
          EXPECT_TRUE(w.Run().ok());
          points = fault::Counters().points();
        }
        for (const std::uint64_t point : options.Pick(points, seed + nth)) {
          if (box.Spent()) break;
          RunDir dir;
          fault::ResetFaultVfs();
          fault::ArmFault(f.op, nth, f.code, false);
          const fault::CutMode mode = ModeFor(seed, point);
          fault::ArmPowerCut(point, mode, seed * 7919 + point);
          Workload w(seed, dir.path(), WorkloadSteps());
          ASSERT_TRUE(w.Run().ok());
          const std::string where = w.Where();
          const RecoveryOutcome out = RebootAndCheck(w, {FmLosesPartitions(seed, point), 0, mode});
          ++cuts;
          decisions += out.decisions;
          lost += out.lost;
          if (out.failure.empty()) continue;
          ++failures;
          ADD_FAILURE() << fault::IoOpName(f.op) << " #" << nth << " failed with SQLite code "
                        << f.code << ", then the power cut at point " << point << " of " << points
                        << " (" << fault::CutModeName(mode) << ", during " << where
                        << "): " << out.failure << "\n  seed " << seed;
          if (failures >= 5) FAIL() << "stopping after 5 failures";
        }
      }
    }
  }
  const long long ms = box.elapsed_ms();
  std::printf(
      "power-cut after I/O error sweep: %llu cut points, %llu acknowledged decisions "
      "checked, %llu acknowledged decisions lost, %lld ms\n",
      static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(decisions),
      static_cast<unsigned long long>(lost), static_cast<long long>(ms));
  EXPECT_EQ(lost, 0u);
}

}  // namespace
}  // namespace gfp::faulttest
