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

#include <chrono>
#include <cstdio>

#include "common/fault_vfs.h"
#include "fault/powercut/recovery_check.h"
#include "fault/powercut/sweep_options.h"
#include "fault/powercut/workload.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;

// CI size: every cut point of 8 workloads (about 1,200 cut points).
constexpr std::uint64_t kCiSeeds = 8;
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
  Workload w(seed, dir.path());
  Status ran = w.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  const std::uint64_t points = fault::Counters().points();
  const RecoveryOutcome crash = RebootAndCheck(w, false);
  EXPECT_EQ(crash.failure, "") << "seed " << seed << " without a cut";
  EXPECT_GT(crash.decisions, 0u) << "seed " << seed << " acknowledged nothing";
  return points;
}

TEST_F(PowerCutSweep, EveryAcknowledgedDecisionSurvivesACutAtEachPoint) {
  const SweepOptions options = SweepOptions::FromEnv(kCiSeeds, kCiPointsPerSeed);
  const auto begin = std::chrono::steady_clock::now();
  std::uint64_t cuts = 0, decisions = 0, lost = 0, failures = 0, total_points = 0;
  for (std::uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    const std::uint64_t points = CountPoints(seed);
    total_points += points;
    for (const std::uint64_t point : options.Pick(points, seed)) {
      RunDir dir;
      fault::ResetFaultVfs();
      const fault::CutMode mode = ModeFor(seed, point);
      fault::ArmPowerCut(point, mode, seed * 7919 + point);
      Workload w(seed, dir.path());
      Status ran = w.Run();
      ASSERT_TRUE(ran.ok()) << ran.message();
      const std::string where = w.Where();
      const bool cut = fault::PoweredOff();
      const RecoveryOutcome out = RebootAndCheck(w, FmLosesPartitions(seed, point));
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
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - begin)
                      .count();
  std::printf(
      "power-cut sweep: %llu cut points (of %llu I/O points in %llu seeds), %llu "
      "acknowledged decisions checked, %llu acknowledged decisions lost, %lld ms\n",
      static_cast<unsigned long long>(cuts), static_cast<unsigned long long>(total_points),
      static_cast<unsigned long long>(options.seeds), static_cast<unsigned long long>(decisions),
      static_cast<unsigned long long>(lost), static_cast<long long>(ms));
  EXPECT_EQ(lost, 0u);
}

}  // namespace
}  // namespace gfp::faulttest
