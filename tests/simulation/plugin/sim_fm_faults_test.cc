// The simulated FM's faults for issue 11 (lost replies, caller crashes, one-shot delays), called
// through the C ABI the plugin loads: each does what the simulation relies on.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "adapters/fm/fabric_manager_library.h"
#include "adapters/fm/fm_abi.h"
#include "common/temp_dir.h"
#include "sim/fm/fm_sim_control.h"

namespace gfp::simtest {
namespace {

namespace abi = adapters::fm::abi;

class SimFmFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    const std::string state = (dir_.path() / "fm.state").string();
    auto control = fmsim::FmSimControl::Create(state, "h100");
    ASSERT_TRUE(control.ok()) << control.status().message();
    control_ = std::make_unique<fmsim::FmSimControl>(std::move(control).value());
    ASSERT_EQ(::setenv("NVFM_SIM_STATE", state.c_str(), 1), 0);
    auto library = adapters::fm::FabricManagerLibrary::Load(GFP_FM_SIM_LIBRARY);
    ASSERT_TRUE(library.ok()) << library.status().message();
    library_ = *library;
    fn().fmLibShutdown();  // the library is process-global: start from "not initialised"
    ASSERT_EQ(fn().fmLibInit(), abi::kSuccess);
    abi::ConnectParamsV2 params{};
    params.version = abi::kConnectParamsV2Version;
    std::strcpy(params.addressInfo, "/run/fm.sock");
    params.timeoutMs = 1000;
    params.addressIsUnixSocket = 1;
    params.addressType = abi::kAddrUnix;
    ASSERT_EQ(fn().fmConnect(&params, &handle_), abi::kSuccess);
  }
  void TearDown() override { fn().fmLibShutdown(); }

  const adapters::fm::FmFunctions& fn() { return library_->fn(); }
  fmsim::FmSimControl& sim() { return *control_; }
  std::vector<std::uint32_t> Active() {
    auto active = sim().ActivePartitions();
    EXPECT_TRUE(active.ok());
    return active.ok() ? *active : std::vector<std::uint32_t>{};
  }
  // Runs `call` in a forked child and returns its exit status.
  template <typename F>
  int InChild(F call) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(call());
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  testing::TempDir dir_;
  std::unique_ptr<fmsim::FmSimControl> control_;
  std::shared_ptr<const adapters::fm::FabricManagerLibrary> library_;
  abi::fmHandle_t handle_ = nullptr;
};

TEST_F(SimFmFaults, LostTimeoutReplyStillActivates) {
  ASSERT_TRUE(sim().LoseReply("fmActivateFabricPartition", abi::kTimeout).ok());
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 1), abi::kTimeout);
  EXPECT_EQ(Active(), std::vector<std::uint32_t>{1});
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 2), abi::kSuccess);  // consumed
  auto log = sim().CallLog();
  ASSERT_TRUE(log.ok());
  ASSERT_GE(log->size(), 2u);
  const fmsim::CallRecord& lost = (*log)[log->size() - 2];
  EXPECT_EQ(lost.function, "fmActivateFabricPartition");
  EXPECT_EQ(lost.code, abi::kSuccess);  // the log says what FM did
  EXPECT_NE(lost.note.find("reply lost"), std::string::npos) << lost.note;
}

TEST_F(SimFmFaults, LostConnectionReplyDeactivatesAndDropsTheHandle) {
  ASSERT_TRUE(sim().ActivateDirectly(1).ok());
  ASSERT_TRUE(sim().LoseReply("fmDeactivateFabricPartition", abi::kConnectionNotValid).ok());
  EXPECT_EQ(fn().fmDeactivateFabricPartition(handle_, 1), abi::kConnectionNotValid);
  EXPECT_TRUE(Active().empty());
  EXPECT_EQ(fn().fmDeactivateFabricPartition(handle_, 1), abi::kConnectionNotValid);  // stale
}

TEST_F(SimFmFaults, ACallThatFailsAnywayKeepsTheLostReplyArmed) {
  ASSERT_TRUE(sim().ActivateDirectly(1).ok());
  ASSERT_TRUE(sim().LoseReply("fmActivateFabricPartition", abi::kTimeout).ok());
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 1), abi::kInUse);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 2), abi::kTimeout);
}

TEST_F(SimFmFaults, CrashBeforeTheCallLeavesFmUnchanged) {
  const int status = InChild([&] {
    if (!sim()
             .CrashCaller("fmActivateFabricPartition", fmsim::CrashPoint::kBefore, 1, ::getpid())
             .ok()) {
      return 1;
    }
    fn().fmActivateFabricPartition(handle_, 1);
    return 0;
  });
  EXPECT_EQ(status, fmsim::kCrashExitCode);
  EXPECT_TRUE(Active().empty());
}

TEST_F(SimFmFaults, CrashAfterTheCallKeepsItsEffect) {
  const int status = InChild([&] {
    if (!sim()
             .CrashCaller("fmActivateFabricPartition", fmsim::CrashPoint::kAfter, 1, ::getpid())
             .ok()) {
      return 1;
    }
    fn().fmActivateFabricPartition(handle_, 1);
    return 0;
  });
  EXPECT_EQ(status, fmsim::kCrashExitCode);
  EXPECT_EQ(Active(), std::vector<std::uint32_t>{1});
}

TEST_F(SimFmFaults, CrashOfAnotherProcessLeavesThisOneAlone) {
  ASSERT_TRUE(
      sim().CrashCaller("fmActivateFabricPartition", fmsim::CrashPoint::kBefore, 1, 1).ok());
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 1), abi::kSuccess);  // pid 1 is not us
}

TEST_F(SimFmFaults, OneShotDelayIsInFlightUntilTheCallReturns) {
  ASSERT_TRUE(sim().DelayNext("fmActivateFabricPartition", 1000).ok());
  std::atomic<bool> returned{false};
  std::thread slow([&] {
    EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 1), abi::kSuccess);
    returned = true;
  });
  // Counted while the call sleeps its delay (it stops counting before it returns): poll until
  // the thread is in it, or the call came back without ever counting.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Result<int> in_flight = sim().DelayedCallsInFlight();
  while (in_flight.ok() && *in_flight == 0 && !returned &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    in_flight = sim().DelayedCallsInFlight();
  }
  ASSERT_TRUE(in_flight.ok());
  EXPECT_EQ(*in_flight, 1);
  slow.join();
  in_flight = sim().DelayedCallsInFlight();
  ASSERT_TRUE(in_flight.ok());
  EXPECT_EQ(*in_flight, 0);
  EXPECT_EQ(Active(), std::vector<std::uint32_t>{1});
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 2), abi::kSuccess);  // one shot only
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(150));
}

}  // namespace
}  // namespace gfp::simtest
