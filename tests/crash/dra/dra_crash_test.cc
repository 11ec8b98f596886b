// Crash test of DRA mode: seeded runs of claims prepared, repeated and unprepared through the fake
// kubelet's DRA side while serve is SIGKILLed (idle, inside an FM activation, while an activation,
// a deactivation or a claim's GET is held), claims are deleted while it is down, the API server
// fails and kubelet wipes the slice (dra_crash_run.h says what each round does and checks).
//
// What the seed reproduces: the node, the operations, claim sizes, kill points and faults, and so
// the GPUs the stand-in scheduler gives, as long as serve answers the same. What it does not:
// timers inside serve (reconciliation, slice publishing), so which request meets a fault, and
// with it a Prepare that fails in one run (kubelet retries it later) and not in another, which
// changes the claims later operations pick from.
//
// A failure prints the seed, the command that reruns it and the run so far. GFP_CRASH_SEED=<n>
// picks the seed, GFP_CRASH_ITERATIONS=<n> the rounds (default 5); KEEP_TEST_DIRS=1 keeps the
// world, including serve.log.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>

#include "process/child_process.h"
#include "tests/common/temp_dir.h"
#include "tests/crash/dra/dra_crash_run.h"

namespace gfp::crashtest {
namespace {

std::uint64_t EnvOr(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string RerunCommand(std::uint64_t seed, std::uint64_t rounds) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return "GFP_CRASH_SEED=" + std::to_string(seed) +
         " GFP_CRASH_ITERATIONS=" + std::to_string(rounds) + " " +
         process::SelfExecutable().string() + " --gtest_filter=" + test->test_suite_name() + "." +
         test->name();
}

class DraCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed = EnvOr("GFP_CRASH_SEED", std::random_device{}());
    rounds = EnvOr("GFP_CRASH_ITERATIONS", 5);
    std::cout << "GFP_CRASH_SEED=" << seed << " GFP_CRASH_ITERATIONS=" << rounds << std::endl;
  }

  // The run (up to a failure); on failure, the seed and how to rerun it first.
  void Report(const DraCrashRun& run) {
    if (HasFailure()) {
      std::cout << "DRA crash test FAILED with GFP_CRASH_SEED=" << seed << "; rerun:\n  "
                << RerunCommand(seed, rounds) << "\n";
    }
    std::cout << "the run:\n";
    for (const auto& line : run.trace()) std::cout << line << "\n";
    std::cout.flush();
  }

  std::uint64_t seed = 0;
  std::uint64_t rounds = 0;
};

TEST_F(DraCrashTest, ClaimsSurviveKillsFaultsAndWipesAndNothingStaysPending) {
  SCOPED_TRACE("GFP_CRASH_SEED=" + std::to_string(seed));
  gfp::testing::TempDir dir;
  std::cout << "world: " << dir.path().string() << std::endl;
  DraCrashRun run(seed, dir.path());
  run.Run(rounds);
  Report(run);
}

}  // namespace
}  // namespace gfp::crashtest
