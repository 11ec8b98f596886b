// Registration and ListAndWatch (kubelet.md §5 items 3 and 4), kubelet restarts and socket
// takeover refusal (items 2 and 8), against the real serve binary.
#include <set>

#include "integration/plugin/reconcile_passes.h"
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

class RegistrationTest : public ServeFixture {
 protected:
  // The registration as the fake kubelet recorded it, and the ListAndWatch list it sees.
  void ExpectRegisteredAsKubeVirtPlugin(bool fabric_manager) {
    const auto log = kubelet_->RegistrationLog();
    ASSERT_FALSE(log.empty());
    const auto& first = log.front();
    EXPECT_TRUE(first.status.ok()) << Describe(first.status);
    EXPECT_EQ(first.request.version(), "v1beta1");
    EXPECT_EQ(first.request.resource_name(), resource_);
    EXPECT_EQ(first.request.endpoint(), "kubevirt-" + resource_.substr(11) + ".sock");
    EXPECT_EQ(first.request.options().pre_start_required(), fabric_manager);
    EXPECT_TRUE(first.request.options().get_preferred_allocation_available());
    EXPECT_TRUE(std::filesystem::exists(device_plugin_dir_ / first.request.endpoint()));

    auto snapshot = kubelet_->Resource(resource_);
    ASSERT_TRUE(snapshot.has_value());
    EXPECT_EQ(snapshot->endpoint, first.request.endpoint());
    // The options the kubelet got from GetDevicePluginOptions equal the ones in RegisterRequest.
    EXPECT_EQ(snapshot->options.pre_start_required(), fabric_manager);
    EXPECT_TRUE(snapshot->options.get_preferred_allocation_available());

    // The full list: every GPU once, its NUMA node as topology; no NVSwitch or other function.
    std::set<std::string> ids;
    for (const auto& d : snapshot->devices) {
      EXPECT_TRUE(ids.insert(d.id()).second) << "duplicate device " << d.id();
      EXPECT_LE(d.id().size(), 63u);
      EXPECT_EQ(d.health(), "Healthy") << d.id();
      const sim::FakeGpu* gpu = node_.FindGpu(d.id());
      ASSERT_NE(gpu, nullptr) << "not a GPU of the node: " << d.id();
      ASSERT_EQ(d.topology().nodes_size(), 1) << d.id();
      EXPECT_EQ(d.topology().nodes(0).id(), gpu->numa_node) << d.id();
    }
    const auto gpus = node_.GpuBdfs();
    EXPECT_EQ(ids, std::set<std::string>(gpus.begin(), gpus.end()));
  }
};

TEST_F(RegistrationTest, RegistersH100WithFabricManager) {
  Prepare({});
  StartServe();
  EXPECT_EQ(resource_, "nvidia.com/GH100_H100_SXM5_80GB");
  ExpectRegisteredAsKubeVirtPlugin(true);
  // Both NUMA nodes are present on this preset, so topology is not trivially 0.
  std::set<int> numa;
  for (const auto& gpu : node_.gpus) numa.insert(gpu.numa_node);
  EXPECT_EQ(numa.size(), 2u);
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 1);
}

TEST_F(RegistrationTest, RegistersWithoutFabricManager) {
  ServeSetup setup;
  setup.fabric_manager = false;
  Prepare(setup);
  StartServe(true, {{"--fm-library", "<unset>"}, {"--pci-module-mapping", "<unset>"}});
  ExpectRegisteredAsKubeVirtPlugin(false);
  EXPECT_EQ(FmCalls("fmConnect"), 0) << "FM must not be touched without --fabric-manager";
}

TEST_F(RegistrationTest, RegistersB200) {
  ServeSetup setup;
  setup.preset = sim::NodePreset::kHgxB200;
  Prepare(setup);
  StartServe();
  EXPECT_EQ(resource_, "nvidia.com/GB100_B200");
  ExpectRegisteredAsKubeVirtPlugin(true);
}

TEST_F(RegistrationTest, RegistersA100x16) {
  ServeSetup setup;
  setup.preset = sim::NodePreset::kHgxA100x16;
  Prepare(setup);
  StartServe();
  EXPECT_EQ(resource_, "nvidia.com/GA100_A100_SXM4_80GB");
  ExpectRegisteredAsKubeVirtPlugin(true);
  EXPECT_EQ(kubelet_->Resource(resource_)->devices.size(), 16u);
}

TEST_F(RegistrationTest, ReRegistersAfterKubeletRestart) {
  Prepare({});
  StartServe();
  for (int restart = 1; restart <= 2; ++restart) {
    SCOPED_TRACE("kubelet restart " + std::to_string(restart));
    ASSERT_TRUE(kubelet_->Restart().ok());
    ASSERT_TRUE(kubelet_->WaitForResource(
        resource_, [&](const auto& r) { return r.connected && r.registrations == restart + 1; },
        15s))
        << "serve did not register again after the kubelet restart";
    EXPECT_TRUE(
        WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy") && d.size() == 8; }));
    // The new registration works end to end.
    auto preferred = Preferred(node_.GpuBdfs(), {}, 2);
    EXPECT_TRUE(preferred.ok()) << Describe(preferred.status);
  }
  EXPECT_TRUE(serve_->Running());
  // The restarts are in the audit trail.
  EXPECT_TRUE(WaitForEvent(
      "KubeletRestartObserved", [](const auto&) { return true; }, 10s));
  ExpectJournalVerifies();
}

TEST_F(RegistrationTest, ReRegistersWhenOnlyItsSocketIsDeleted) {
  Prepare({});
  StartServe();
  const auto socket = device_plugin_dir_ / ("kubevirt-" + resource_.substr(11) + ".sock");
  ASSERT_TRUE(std::filesystem::remove(socket));
  ASSERT_TRUE(kubelet_->WaitForResource(
      resource_, [](const auto& r) { return r.connected && r.registrations == 2; }, 15s))
      << "serve did not serve and register again after its socket was deleted";
  EXPECT_TRUE(std::filesystem::exists(socket));
  auto preferred = Preferred(node_.GpuBdfs(), {}, 1);
  EXPECT_TRUE(preferred.ok()) << Describe(preferred.status);
  // No registration storm: one re-registration for one deletion, also after 8 more loop turns
  // with a reconcile pass (over 700 ms: the 500 ms kubelet check ran again meanwhile).
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 8));
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 2);
}

TEST_F(RegistrationTest, ReRegistersWhenOnlyKubeletSockIsRecreated) {
  Prepare({});
  StartServe();
  // A kubelet that restarts without cleaning the directory: kubelet.sock is a new file.
  kubelet_->Stop();
  ASSERT_TRUE(kubelet_->Start().ok());
  ASSERT_TRUE(kubelet_->WaitForResource(
      resource_, [](const auto& r) { return r.connected && r.registrations == 2; }, 15s))
      << "serve did not register again after kubelet.sock was re-created";
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 8));  // the kubelet check ran again meanwhile
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 2);
}

TEST_F(RegistrationTest, SecondServeRefusesToTakeTheLiveSocket) {
  Prepare({});
  StartServe();
  const auto socket = device_plugin_dir_ / ("kubevirt-" + resource_.substr(11) + ".sock");
  auto second =
      Spawn(ServeArgs({{"--journal", (dir() / "other" / "journal.db").string()}}), "second-serve");
  ASSERT_NE(second, nullptr);
  auto exit = second->WaitForExit(20s);
  ASSERT_TRUE(exit.has_value()) << "the second serve kept running next to the first";
  EXPECT_FALSE(exit->success()) << exit->ToString();
  EXPECT_NE(second->Log().find("refusing to take over its socket"), std::string::npos)
      << second->Log();
  EXPECT_NE(second->Log().find(socket.string()), std::string::npos);
  // The first one still owns its socket and answers.
  EXPECT_TRUE(std::filesystem::exists(socket));
  EXPECT_TRUE(serve_->Running());
  auto preferred = Preferred(node_.GpuBdfs(), {}, 8);
  EXPECT_TRUE(preferred.ok()) << Describe(preferred.status);
  EXPECT_EQ(kubelet_->Resource(resource_)->registrations, 1);
  ExpectJournalVerifies();
}

TEST_F(RegistrationTest, SecondServeOnTheSameJournalFailsAtOnce) {
  Prepare({});
  StartServe();
  auto second =
      Spawn(ServeArgs({{"--device-plugin-dir", (dir() / "dp2").string()}}), "second-serve");
  ASSERT_NE(second, nullptr);
  auto exit = second->WaitForExit(10s);
  ASSERT_TRUE(exit.has_value()) << "the second serve did not exit";
  EXPECT_FALSE(exit->success()) << exit->ToString();
  EXPECT_NE(second->Log().find("is already open for writing by another process"), std::string::npos)
      << second->Log();
  EXPECT_NE(second->Log().find(journal_.string()), std::string::npos) << second->Log();
  EXPECT_FALSE(std::filesystem::exists(dir() / "dp2")) << "it should fail before serving";
  EXPECT_TRUE(serve_->Running());
  ExpectJournalVerifies();
}

}  // namespace
}  // namespace gfp::testing
