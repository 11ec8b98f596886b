// serve --mode=dra under the faults a real cluster has (issue 45): an API server that accepts
// connections and never answers leaves the node's local work going (/healthz 200, a repeated
// Prepare and every Unprepare answered within a second, /readyz naming the API server); a new
// journal (a restored backup, a lost file) never costs a running VM its partition.
#include <gtest/gtest.h>

#include <chrono>

#include "integration/plugin/metrics_http.h"
#include "tests/integration/dra/dra_world.h"

namespace gfp {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class DraFaultsTest : public testing::DraWorldTest {
 protected:
  DraFaultsTest() : DraWorldTest(200ms) {}

  // serve with its metrics listener on a free port, which it logs.
  void StartWithMetrics() {
    ::setenv("GPU_FABRIC_METRICS_ADDRESS", "127.0.0.1:0", 1);
    StartAndWait();
    ::unsetenv("GPU_FABRIC_METRICS_ADDRESS");
    const std::string marker = "metrics endpoint listening on 127.0.0.1:";
    const Status logged = simworld::ProcessWorld::Eventually([&]() -> Status {
      const std::string log = Log();
      const auto at = log.rfind(marker);  // this serve's, after any earlier one's
      if (at == std::string::npos) return Unavailable("no metrics port logged");
      port_ = std::stoi(log.substr(at + marker.size()));
      return Status::Ok();
    });
    ASSERT_TRUE(logged.ok()) << Log();
  }

  // Reconcile passes the serve loop finished (gpu_fabric_reconcile_seconds_count).
  int ReconcilePasses() {
    const auto count = testing::SampleValue(testing::HttpGet(port_, "/metrics").body,
                                            "gpu_fabric_reconcile_seconds_count");
    return count ? static_cast<int>(*count) : -1;
  }

  // Waits for `passes` more reconcile passes: a check that something did NOT happen waits for
  // the loop to turn, not for a sleep a slow machine may not fill.
  Status WaitForPasses(int passes, std::chrono::milliseconds timeout = 30s) {
    const int start = ReconcilePasses();
    return simworld::ProcessWorld::Eventually(
        [&]() -> Status {
          if (!Alive()) return Internal("serve exited");
          return ReconcilePasses() >= start + passes ? Status::Ok()
                                                     : Unavailable("the loop did not turn");
        },
        timeout);
  }

  // The one claim's Prepare error ("" when prepared) and how long the call took.
  std::pair<std::string, std::chrono::milliseconds> TimedPrepare(const kubelet::DraClaim& claim) {
    const auto started = std::chrono::steady_clock::now();
    auto prepared = world_->dra_kubelet().Prepare({claim});
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    if (!prepared.ok() || !prepared.response.contains(claim.uid)) return {"<no answer>", took};
    return {prepared.response.at(claim.uid).error, took};
  }

  int port_ = 0;
};

TEST_F(DraFaultsTest, AnApiServerThatNeverAnswersLeavesTheLocalWorkGoing) {
  StartWithMetrics();
  const Json a = Store(Allocate("vm-a", 2));
  const Json b = Store(Allocate("vm-b", 2));
  ASSERT_EQ(TimedPrepare(Ref(a)).first, "") << Log();
  ASSERT_EQ(TimedPrepare(Ref(b)).first, "") << Log();
  ASSERT_EQ(ActiveInFm(), 2u);
  // Every request is held for a minute: connections are accepted, nothing is answered.
  world_->api().AddFault({"*", "*", apisim::FaultKind::kDelay, 200, 60s, -1});
  world_->api().CloseWatches();
  world_->api().WipeSlices("node-a");  // a publish is due, and its calls hang
  // The serve loop goes on turning while the API thread waits: 15 passes are 3 s, well past 3
  // reconcile intervals (600 ms), the limit /healthz allows the loop.
  const Status turning = WaitForPasses(15);
  ASSERT_TRUE(turning.ok()) << turning.message() << "\n" << Log();
  const auto health = testing::HttpGet(port_, "/healthz");
  ASSERT_EQ(health.status, 200) << health.body << Log();
  // Not ready once an attempt went unanswered for its timeout (10 s), alive all along.
  testing::HttpReply ready;
  const Status named = simworld::ProcessWorld::Eventually(
      [&]() -> Status {
        ready = testing::HttpGet(port_, "/readyz");
        if (testing::HttpGet(port_, "/healthz").status != 200) return Internal("not alive");
        return ready.status == 503 ? Status::Ok() : Unavailable(ready.body);
      },
      20s);
  EXPECT_TRUE(named.ok()) << named.message();
  EXPECT_NE(ready.body.find("the API server is not usable (no answer to"), std::string::npos)
      << ready.body;
  // A repeated Prepare makes no API call; an Unprepare makes none either.
  const auto [again, took] = TimedPrepare(Ref(a));
  EXPECT_EQ(again, "") << Log();
  EXPECT_LT(took, 1s);
  const auto started = std::chrono::steady_clock::now();
  auto unprepared = world_->dra_kubelet().Unprepare({Ref(b)});
  EXPECT_TRUE(unprepared.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  EXPECT_EQ(ActiveInFm(), 1u) << "vm-b's partition is deactivated, vm-a's kept";
  EXPECT_TRUE(Alive()) << Log();
  world_->api().ClearFaults();
}

// Restoring a backup, or starting with a new journal: the journal does not know the claims
// whose VMs run, and FM's partitions are theirs. None is released as ownerless, however long.
TEST_F(DraFaultsTest, ANewJournalReleasesNoPartitionOfARunningVm) {
  StartWithMetrics();
  const Json a = Store(Allocate("vm-a", 4));
  ASSERT_EQ(TimedPrepare(Ref(a)).first, "") << Log();
  ASSERT_EQ(ActiveInFm(), 1u);
  ASSERT_TRUE(world_->StopPlugin().ok());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    fs::remove(world_->journal_path().string() + suffix);
  }
  StartWithMetrics();
  // The release grace is 600 ms and the reconcile interval 200 ms: 15 passes are 3 s.
  const Status passed = WaitForPasses(15);
  ASSERT_TRUE(passed.ok()) << passed.message() << "\n" << Log();
  EXPECT_EQ(ActiveInFm(), 1u) << "a running VM's partition was released\n" << Log();
}

}  // namespace
}  // namespace gfp
