// serve's life cycle: SIGTERM leaves active partitions alone and exits 0 with an intact journal;
// a restart (after SIGTERM or SIGKILL) keeps the partitions and serves again; FM restarts.
#include "integration/plugin/reconcile_passes.h"
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

class LifecycleTest : public ServeFixture {};

TEST_F(LifecycleTest, SigtermLeavesPartitionsActiveAndExitsZero) {
  ServeSetup setup;
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe();
  ASSERT_TRUE(Allocate({PartitionBdfs(1)}).ok());
  ASSERT_TRUE(Allocate({PartitionBdfs(6)}).ok());  // modules 6, 8
  ASSERT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 6}));
  const int deactivations = FmCalls("fmDeactivateFabricPartition");

  const ExitStatus exit = serve_->Terminate(15s);
  EXPECT_TRUE(exit.success()) << exit.ToString();
  EXPECT_NE(serve_->Log().find("stopped cleanly"), std::string::npos);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 6})) << "VMs keep their partitions";
  EXPECT_EQ(FmCalls("fmDeactivateFabricPartition"), deactivations);
  EXPECT_FALSE(
      std::filesystem::exists(device_plugin_dir_ / ("kubevirt-" + resource_.substr(11) + ".sock")))
      << "our socket should be gone after a clean stop";
  ExpectJournalVerifies();
  const auto state = State();
  EXPECT_EQ(state["active_partitions"].size(), 2u) << state.dump(2);

  // A new serve on the same journal: same partitions, nothing deactivated, registered again.
  StartServe();
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 2);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 6}));
  // The kubelet re-using the answer: the same IDs again need no FM call.
  const int activations = FmCalls("fmActivateFabricPartition");
  EXPECT_TRUE(Allocate({PartitionBdfs(1)}).ok());
  EXPECT_EQ(FmCalls("fmActivateFabricPartition"), activations);
  EXPECT_EQ(FmCalls("fmDeactivateFabricPartition"), deactivations);
  ExpectJournalVerifies();
}

TEST_F(LifecycleTest, SigkillThenRestartRecovers) {
  ServeSetup setup;
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe();
  ASSERT_TRUE(Allocate({PartitionBdfs(2)}).ok());
  const ExitStatus killed = serve_->Kill();
  EXPECT_EQ(killed.signal, SIGKILL) << killed.ToString();
  ExpectJournalVerifies();

  // The stale socket of the killed process is no obstacle, the lock is released with it.
  StartServe();
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{2});
  auto preferred = Preferred(node_.GpuBdfs(), {}, 4);
  ASSERT_TRUE(preferred.ok()) << Describe(preferred.status);
  ExpectJournalVerifies();
}

TEST_F(LifecycleTest, FabricManagerDownAtStartThenUpAllocatesWithoutRestart) {
  Prepare({});
  ASSERT_TRUE(fm_->SetMode(fmsim::Mode::kStarting).ok());  // FM still initialising
  StartServe(/*expect_healthy=*/false);
  // FM answers the connection but is not usable: its devices must not be offered as Healthy.
  EXPECT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Unhealthy"); }, 5s));
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 3));  // each syncs with the starting FM
  EXPECT_TRUE(AllHealth(kubelet_->Resource(resource_)->devices, "Unhealthy"))
      << "devices turned Healthy while Fabric Manager was still starting";
  auto refused = Allocate({PartitionBdfs(3)});
  EXPECT_FALSE(refused.ok()) << "allocated while FM was starting";
  EXPECT_TRUE(ActivePartitions().empty());
  ASSERT_TRUE(fm_->SetMode(fmsim::Mode::kRunning).ok());
  ASSERT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 10s));
  auto allocated = Allocate({PartitionBdfs(3)});
  EXPECT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{3});
  ExpectJournalVerifies();
}

TEST_F(LifecycleTest, FabricManagerResiliencyRestartIsResynced) {
  ServeSetup setup;
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe();
  ASSERT_TRUE(Allocate({PartitionBdfs(1)}).ok());
  ASSERT_TRUE(fm_->Restart(/*resiliency=*/true).ok());
  EXPECT_TRUE(WaitUntil([&] { return FmCalls("fmSetActivatedFabricPartitions") > 0; }, 10s))
      << "serve did not hand the active set back to the restarted FM";
  EXPECT_TRUE(WaitUntil(
      [&] { return fm_->GetMode().ok() && *fm_->GetMode() == fmsim::Mode::kRunning; }, 10s));
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{1});
  EXPECT_TRUE(WaitForEvent(
      "FabricManagerResynced", [](const auto&) { return true; }, 10s));
  // Still allocating.
  auto allocated = Allocate({PartitionBdfs(2)});
  EXPECT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), (std::vector<std::uint32_t>{1, 2}));
  ExpectJournalVerifies();
}

}  // namespace
}  // namespace gfp::testing
