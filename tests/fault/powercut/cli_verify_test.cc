// The operator's tool on a journal as a power cut left it: `journal verify` (a separate process,
// reading the real files: exactly what survived) passes before the plugin has recovered it and
// after, for each cut mode.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "common/fault_vfs.h"
#include "common/temp_dir.h"
#include "fault/powercut/recovery_check.h"
#include "fault/powercut/sweep_options.h"
#include "fault/powercut/workload.h"
#include "process/child_process.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;

struct CliRun {
  int exit_code = -1;
  std::string output;
};

CliRun JournalVerify(const std::string& journal) {
  gfp::testing::TempDir dir;
  process::ProcessOptions o;
  o.binary = GFP_BINARY;
  o.args = {"journal", "verify", "--journal", journal};
  o.log_path = dir.path() / "verify.log";
  CliRun run;
  auto result = process::RunCommand(o, std::chrono::seconds(60));
  if (!result.ok()) {
    run.output = result.status().message();
    return run;
  }
  run.exit_code = result->status.exited ? result->status.code : -1;
  run.output = result->output;
  return run;
}

TEST(PowerCutCli, JournalVerifyPassesOnAJournalLeftByACutAndAfterRecovery) {
  if (std::getenv("GFP_POWERCUT_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
  ASSERT_EQ(fault::InstallFaultVfs(), "");
  const std::uint64_t seed = 1;
  std::uint64_t points = 0;
  {
    RunDir dir;
    fault::ResetFaultVfs();
    Workload w(seed, dir.path());
    ASSERT_TRUE(w.Run().ok());
    points = fault::Counters().points();
  }
  const fault::CutMode modes[] = {fault::CutMode::kDiscardUnsynced, fault::CutMode::kTearLast,
                                  fault::CutMode::kKeepPendingTearLast};
  for (std::size_t i = 0; i < std::size(modes); ++i) {
    const std::uint64_t point = points * (i + 2) / 5;  // 40%, 60%, 80% of the way
    SCOPED_TRACE(std::string(fault::CutModeName(modes[i])) + " at point " + std::to_string(point) +
                 " of " + std::to_string(points));
    RunDir dir;
    fault::ResetFaultVfs();
    fault::ArmPowerCut(point, modes[i], point);
    Workload w(seed, dir.path());
    ASSERT_TRUE(w.Run().ok());
    ASSERT_TRUE(fault::PoweredOff());
    w.world().CrashPlugin();
    ASSERT_EQ(fault::ResetFaultVfs(), 0);
    const std::string journal = w.world().config().journal.string();
    const CliRun before = JournalVerify(journal);
    EXPECT_EQ(before.exit_code, 0) << before.output;
    EXPECT_NE(before.output.find("head "), std::string::npos) << before.output;
    const RecoveryOutcome out = RebootAndCheck(w, Reboot{});
    EXPECT_EQ(out.failure, "");
    w.world().CrashPlugin();
    const CliRun after = JournalVerify(journal);
    EXPECT_EQ(after.exit_code, 0) << after.output;
  }
}

}  // namespace
}  // namespace gfp::faulttest
