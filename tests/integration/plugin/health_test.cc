// ListAndWatch updates on health changes (kubelet.md §5 item 4): a VFIO group node removed and
// re-created (inotify, well before the periodic re-check), Fabric Manager unreachable at start
// then reachable, without restarting serve.
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

class HealthTest : public ServeFixture {};

TEST_F(HealthTest, VfioGroupNodeRemovedThenRecreated) {
  Prepare({});
  StartServe();
  const std::string victim = node_.gpus[2].bdf;
  const int updates_before = kubelet_->Resource(resource_)->updates;

  ASSERT_TRUE(node_.RemoveVfioGroupNode(GroupOf(victim)).ok());
  // The periodic re-check runs every 10 s; within 5 s only the inotify watch can have seen it.
  EXPECT_TRUE(WaitForDevices(
      [&](const auto& d) {
        if (d.size() != node_.gpus.size() || HealthOf(d, victim) != "Unhealthy") return false;
        for (const auto& gpu : node_.gpus) {
          if (gpu.bdf != victim && HealthOf(d, gpu.bdf) != "Healthy") return false;
        }
        return true;
      },
      5s))
      << victim << " did not turn Unhealthy (alone) after /dev/vfio/" << GroupOf(victim)
      << " was removed";
  // The log names the device and the reason (docs/bad-input.md §4).
  EXPECT_TRUE(serve_->WaitForLog("device " + victim + " is Unhealthy: ", 5s)) << serve_->Log();
  EXPECT_NE(serve_->Log().find("/vfio/" + GroupOf(victim)), std::string::npos) << serve_->Log();

  ASSERT_TRUE(node_.RecreateVfioGroupNode(GroupOf(victim)).ok());
  EXPECT_TRUE(
      WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy") && d.size() == 8; }, 5s))
      << victim << " did not turn Healthy again";
  // Full lists were sent for each change, on the same stream.
  auto snapshot = kubelet_->Resource(resource_);
  EXPECT_GE(snapshot->updates, updates_before + 2);
  EXPECT_EQ(snapshot->stream_ends, 0);
  EXPECT_EQ(snapshot->registrations, 1);

  // The journal has both changes, naming the device.
  int changes = 0;
  for (const auto& e : History()) {
    if (e.value("type", "") == "DeviceHealthChanged" &&
        e.dump().find(victim) != std::string::npos) {
      ++changes;
    }
  }
  EXPECT_EQ(changes, 2);
  ExpectJournalVerifies();
}

TEST_F(HealthTest, FabricManagerUnreachableAtStartThenReachable) {
  Prepare({});
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  StartServe(/*expect_healthy=*/false);
  EXPECT_TRUE(
      WaitForDevices([](const auto& d) { return AllHealth(d, "Unhealthy") && d.size() == 8; }, 5s))
      << "with FM unreachable every FM-managed device must be Unhealthy";
  // Nothing is allocated without FM.
  auto refused = Allocate({PartitionBdfs(1)});
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status.error_message().find("Fabric Manager is not connected"),
            std::string::npos)
      << Describe(refused.status);
  EXPECT_TRUE(ActivePartitions().empty());

  const pid_t pid = serve_->pid();
  ASSERT_TRUE(fm_->SetUnreachable(false).ok());
  EXPECT_TRUE(
      WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy") && d.size() == 8; }, 10s))
      << "devices did not turn Healthy once FM was reachable";
  EXPECT_TRUE(serve_->Running());
  EXPECT_EQ(serve_->pid(), pid);
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 1) << "no restart, no re-registration";

  // And now it allocates.
  auto allocated = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(allocated.ok()) << Describe(allocated.status);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{1});
  // (A journal that never saw FM connected has no FabricManagerDisconnected: the state machine
  // journals transitions only.)
  auto types = HistoryTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), "FabricManagerConnected"), types.end());
  ExpectJournalVerifies();
}

TEST_F(HealthTest, FabricManagerLostWhileServingThenBack) {
  Prepare({});
  StartServe();
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  EXPECT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Unhealthy"); }, 10s))
      << "devices stayed Healthy while FM was unreachable";
  ASSERT_TRUE(fm_->SetUnreachable(false).ok());
  EXPECT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 10s));
  EXPECT_EQ(kubelet_->Resource(resource_)->stream_ends, 0);
  ExpectJournalVerifies();
}

}  // namespace
}  // namespace gfp::testing
