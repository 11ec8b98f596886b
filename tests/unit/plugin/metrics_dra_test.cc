// DRA mode's metrics and readiness (SPEC §11): the gauges computed from the journaled state,
// and ServeMetrics::DraLoopTurned on the real core (the deterministic world), scraped over TCP.
#include <gtest/gtest.h>

#include <thread>

#include "integration/plugin/metrics_http.h"
#include "plugin/core_gauges.h"
#include "plugin/serve_metrics.h"
#include "tests/unit/dra_mode/dra_world.h"

namespace gfp::plugin {
namespace {

using namespace std::chrono_literals;
using gfp::testing::HttpGet;
using gfp::testing::SampleValue;

sm::Allocation ClaimAllocation(const std::string& uid, bool prepared) {
  sm::Allocation a;
  a.id = "alloc-" + uid;
  a.status = sm::AllocationStatus::kGranted;
  a.claim = sm::Claim{};
  a.claim->uid = uid;
  a.claim->prepared = prepared;
  return a;
}

TEST(DraGaugesTest, PreparedClaimsAndTheSliceGenerationComeFromTheState) {
  sm::State s;
  metrics::GaugeValues before;
  FillStateGauges(s, before);
  EXPECT_EQ(before.dra_claims_prepared, 0u);
  EXPECT_EQ(before.resource_slice_generation, 0);

  s.allocations["alloc-u1"] = ClaimAllocation("u1", true);
  s.allocations["alloc-u2"] = ClaimAllocation("u2", false);  // files not written yet
  s.allocations["alloc-u3"] = ClaimAllocation("u3", true);
  sm::Allocation device_plugin;  // an Allocate's allocation: no claim
  device_plugin.id = "alloc-dp";
  device_plugin.status = sm::AllocationStatus::kBound;
  s.allocations["alloc-dp"] = device_plugin;
  s.unpreparing_claims["u4"] = sm::UnpreparingClaim{};  // being unprepared: not counted
  s.resource_slice.generation = 9;
  s.last_seq = 77;

  EXPECT_EQ(PreparedClaims(s), 2u);
  metrics::GaugeValues values;
  FillStateGauges(s, values);
  EXPECT_EQ(values.dra_claims_prepared, 2u);
  EXPECT_EQ(values.resource_slice_generation, 9);
  EXPECT_EQ(values.journal_last_seq, 77u);

  metrics::MetricsRegistry registry("1.2.3");
  registry.Publish(values);
  const std::string text = registry.Serialize();
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_claims_prepared"), 2);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_resource_slice_generation"), 9);
}

class DraServeMetricsTest : public dra_mode::DraWorldTest {
 protected:
  void SetUp() override {
    DraWorldTest::SetUp();
    auto started = ServeMetrics::Start("127.0.0.1:0", "1.2.3", 100ms);
    ASSERT_TRUE(started.ok()) << started.status().message();
    metrics_ = std::move(started).value();
    metrics_->Attach(world_->core());
  }

  gfp::testing::HttpReply Readyz() { return HttpGet(metrics_->port(), "/readyz"); }
  std::optional<double> Scrape(const std::string& series) {
    return SampleValue(HttpGet(metrics_->port(), "/metrics").body, series);
  }

  std::unique_ptr<ServeMetrics> metrics_;
};

TEST_F(DraServeMetricsTest, ReadyOnceRegisteredAndPublishedAndNotReadyWhileTheApiServerIsNot) {
  EXPECT_EQ(Readyz().status, 503);  // nothing reported yet
  metrics_->DraLoopTurned(world_->core(), false, false, "");
  auto reply = Readyz();
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body, "not ready: the DRA plugin is not registered with kubelet yet\n");
  metrics_->DraLoopTurned(world_->core(), true, false, "");
  reply = Readyz();
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body, "not ready: the ResourceSlice was not published yet\n");
  metrics_->DraLoopTurned(world_->core(), true, true, "");
  reply = Readyz();
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.body, "ready\n");

  // The API server goes away: /readyz says so (alive all the same: /healthz is the loop's);
  // back, ready again.
  metrics_->DraLoopTurned(world_->core(), true, false, "get nodes node-a: connection refused");
  reply = Readyz();
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body,
            "not ready: the API server is not usable (get nodes node-a: connection refused)\n");
  metrics_->DraLoopTurned(world_->core(), true, false, "");
  EXPECT_EQ(Readyz().status, 200);
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(Readyz().status, 200);

  // Kubelet forgets the plugin (a kubelet restart before it re-registers): not ready again.
  metrics_->DraLoopTurned(world_->core(), false, false, "");
  reply = Readyz();
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(reply.body, "not ready: the DRA plugin is not registered with kubelet yet\n");
  metrics_->DraLoopTurned(world_->core(), true, false, "");
  EXPECT_EQ(Readyz().status, 200);  // the slice was published once since the start
}

TEST_F(DraServeMetricsTest, ThePreparedClaimGaugeFollowsTheJournal) {
  metrics_->DraLoopTurned(world_->core(), true, true, "");
  EXPECT_EQ(Scrape("gpu_fabric_dra_claims_prepared"), 0);
  api_.claims["vms/vm-a-gpus"] = Claim("u-1", GpusOf(PartitionOfSize(2)));
  ASSERT_EQ(preparer_->Prepare({"u-1", "vms", "vm-a-gpus"}).error, "");
  metrics_->DraLoopTurned(world_->core(), true, true, "");
  EXPECT_EQ(Scrape("gpu_fabric_dra_claims_prepared"), 1);
  EXPECT_EQ(Scrape("gpu_fabric_partitions_active"), 1);
}

}  // namespace
}  // namespace gfp::plugin
