// FabricManagerClient::ActivatePartitionWithVfs against libnvfm-sim.so through the real dlopen
// path: BDF conversion, the VF order FM receives, FM's refusals with their names, the checks made
// before anything is sent, and the reconnect / deadline path shared with fmActivateFabricPartition.
#include <chrono>
#include <thread>

#include "adapters/fm/fm_pci_device.h"
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using std::chrono::milliseconds;
using testing::FmSimTest;
using Vfs = std::vector<std::string>;

// h100 table: partition 3 = GPUs 1,3; partition 1 = GPUs 1..4; partition 11 = GPU 5.
const Vfs kPartition3 = {"0000:1b:00.4", "0000:52:00.4"};

class FmClientVf : public FmSimTest {
 protected:
  void SetUp() override {
    FmSimTest::SetUp();
    const std::pair<const char*, std::uint32_t> parents[] = {
        {"0000:1b:00.4", 1}, {"0000:1b:00.5", 1}, {"0000:43:00.4", 2},
        {"0000:52:00.4", 3}, {"0000:61:00.4", 4}, {"0001:9d:00.4", 5}};
    for (const auto& [vf, gpu] : parents) ASSERT_TRUE(sim().SetVfParent(vf, gpu).ok());
    ASSERT_TRUE(sim().SetFabricMode(fmsim::FabricMode::kVgpu).ok());
  }

  std::vector<fmsim::VfActivation> VfActivations() {
    auto activations = sim().VfActivations();
    EXPECT_TRUE(activations.ok()) << activations.status().message();
    return activations.ok() ? *activations : std::vector<fmsim::VfActivation>{};
  }
};

TEST(FmPciDevice, ParsesAnySpellingAndRefusesMalformedText) {
  auto canonical = ParsePciDevice("0000:1b:00.4");
  ASSERT_TRUE(canonical.ok());
  EXPECT_EQ(canonical->domain, 0u);
  EXPECT_EQ(canonical->bus, 0x1bu);
  EXPECT_EQ(canonical->device, 0u);
  EXPECT_EQ(canonical->function, 4u);
  auto smi = ParsePciDevice("00010000:C3:1F.7");  // nvidia-smi spelling, a VMD domain
  ASSERT_TRUE(smi.ok());
  EXPECT_EQ(smi->domain, 0x10000u);
  EXPECT_EQ(smi->bus, 0xc3u);
  EXPECT_EQ(smi->device, 0x1fu);
  EXPECT_EQ(smi->function, 7u);
  EXPECT_EQ(PciDeviceName(*smi), "10000:c3:1f.7");
  EXPECT_EQ(PciDeviceName(*canonical), "0000:1b:00.4");
  for (const char* bad : {"", "1b:00.4", "0000:1b:00.8", "0000:1b:20.0", "0000:1b:00", "x\n"}) {
    auto parsed = ParsePciDevice(bad);
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParsePciDevice("x\n").status().message(),
            "\"x\\n\" is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:1b:00.0)");
}

TEST_F(FmClientVf, ActivatesWithTheVfsInTheOrderGiven) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus status = client->ActivatePartitionWithVfs(3, kPartition3);
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{3}));
  ASSERT_EQ(VfActivations().size(), 1u);
  EXPECT_EQ(VfActivations()[0], (fmsim::VfActivation{3, kPartition3, abi::kSuccess, ""}));

  // Other spellings reach FM as the same PCI devices; the domain is passed through.
  ASSERT_TRUE(client->Deactivate(3).ok());
  FmStatus spelled = client->ActivatePartitionWithVfs(3, Vfs{"00000000:1B:00.4", "0000:52:00.4"});
  ASSERT_TRUE(spelled.ok()) << spelled.error().message;
  FmStatus domain = client->ActivatePartitionWithVfs(11, Vfs{"0001:9d:00.4"});  // GPU 5
  ASSERT_TRUE(domain.ok()) << domain.error().message;
  EXPECT_EQ(VfActivations().back().vfs, (Vfs{"0001:9d:00.4"}));
}

TEST_F(FmClientVf, FmRefusalsComeBackWithTheirNamesAndMeaning) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus same_gpu = client->ActivatePartitionWithVfs(3, Vfs{"0000:1b:00.4", "0000:1b:00.5"});
  ASSERT_FALSE(same_gpu.ok());
  EXPECT_EQ(same_gpu.fm_code(), abi::kBadParam);
  EXPECT_TRUE(same_gpu.error().from_library);
  EXPECT_EQ(same_gpu.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(same_gpu.error().message,
            "fmActivateFabricPartitionWithVFs(3, [0000:1b:00.4,0000:1b:00.5]): FM_ST_BADPARAM "
            "(unknown partition id, or the VFs are not one per GPU of the partition in its GPU "
            "order)");
  EXPECT_EQ(VfActivations().back().note, "two VFs of GPU 1");

  FmStatus reversed = client->ActivatePartitionWithVfs(3, Vfs{"0000:52:00.4", "0000:1b:00.4"});
  EXPECT_EQ(reversed.fm_code(), abi::kBadParam);
  EXPECT_EQ(client->ActivatePartitionWithVfs(3, Vfs{"0000:1b:00.4"}).fm_code(), abi::kBadParam);
  EXPECT_EQ(client->ActivatePartitionWithVfs(3, Vfs{"0000:1b:00.4", "0000:43:00.4"}).fm_code(),
            abi::kBadParam);  // GPU 2 is not in partition 3
  EXPECT_EQ(client->ActivatePartitionWithVfs(3, Vfs{"0000:1b:00.4", "0000:52:00.6"}).fm_code(),
            abi::kBadParam);  // a VF FM knows no parent of
  EXPECT_EQ(client->ActivatePartitionWithVfs(99, Vfs{"0000:1b:00.4"}).fm_code(), abi::kBadParam);

  ASSERT_TRUE(client->ActivatePartitionWithVfs(3, kPartition3).ok());
  FmStatus in_use = client->ActivatePartitionWithVfs(
      1, Vfs{"0000:1b:00.5", "0000:43:00.4", "0000:52:00.4", "0000:61:00.4"});
  EXPECT_EQ(in_use.fm_code(), abi::kInUse);
  EXPECT_EQ(in_use.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{3}));
}

TEST_F(FmClientVf, SharedNvswitchModeIsNotSupported) {
  ASSERT_TRUE(sim().SetFabricMode(fmsim::FabricMode::kSharedNvswitch).ok());
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus status = client->ActivatePartitionWithVfs(3, kPartition3);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.fm_name(), "FM_ST_NOT_SUPPORTED");
  EXPECT_EQ(status.error().message,
            "fmActivateFabricPartitionWithVFs(3, [0000:1b:00.4,0000:52:00.4]): "
            "FM_ST_NOT_SUPPORTED (Fabric Manager is not in vGPU mode (FABRIC_MODE=2))");
  EXPECT_TRUE(Active().empty());
  // And the other way round: vGPU-mode FM refuses whole-GPU activation.
  ASSERT_TRUE(sim().SetFabricMode(fmsim::FabricMode::kVgpu).ok());
  EXPECT_EQ(client->Activate(3).fm_code(), abi::kNotSupported);
}

TEST_F(FmClientVf, BadListsAreRefusedBeforeAnythingIsSent) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus malformed = client->ActivatePartitionWithVfs(3, Vfs{"0000:1b:00.4", "52:00.4\x1b"});
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.fm_code(), abi::kBadParam);
  EXPECT_FALSE(malformed.error().from_library);
  EXPECT_EQ(malformed.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(malformed.error().message,
            "fmActivateFabricPartitionWithVFs(3): FM_ST_BADPARAM (not sent: \"52:00.4\\x1b\" is "
            "not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:1b:00.0))");

  FmStatus empty = client->ActivatePartitionWithVfs(3, Vfs{});
  EXPECT_EQ(empty.error().message,
            "fmActivateFabricPartitionWithVFs(3): FM_ST_BADPARAM (not sent: the VF list is empty)");
  EXPECT_FALSE(empty.error().from_library);
  FmStatus too_many = client->ActivatePartitionWithVfs(0, Vfs(17, "0000:1b:00.4"));
  EXPECT_EQ(too_many.error().message,
            "fmActivateFabricPartitionWithVFs(0): FM_ST_BADPARAM (not sent: 17 VFs exceed the "
            "maximum 16 (one per GPU))");
  EXPECT_FALSE(too_many.error().from_library);

  auto log = sim().CallLog();
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->empty());  // not even fmConnect
}

TEST_F(FmClientVf, ReconnectsAndRetriesLikeWholeGpuActivation) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().DropConnections().ok());
  FmStatus status = client->ActivatePartitionWithVfs(3, kPartition3);
  ASSERT_TRUE(status.ok()) << status.error().message;
  auto activations = VfActivations();
  ASSERT_EQ(activations.size(), 2u);
  EXPECT_EQ(activations[0].code, abi::kConnectionNotValid);
  EXPECT_EQ(activations[1], (fmsim::VfActivation{3, kPartition3, abi::kSuccess, ""}));
  EXPECT_EQ(CallsOf("fmConnect").size(), 2u);
}

TEST_F(FmClientVf, ACallPastItsDeadlineTimesOut) {
  FabricManagerConfig config = Config();
  config.call_deadline = milliseconds(200);
  auto client = NewClient(config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().SetLatency("fmActivateFabricPartitionWithVFs", 600).ok());
  FmStatus hung = client->ActivatePartitionWithVfs(3, kPartition3);
  EXPECT_EQ(hung.fm_name(), "FM_ST_TIMEOUT");
  EXPECT_FALSE(hung.error().from_library);
  EXPECT_EQ(client->connection_state(), ConnectionState::kBroken);
  ASSERT_TRUE(sim().SetLatency("fmActivateFabricPartitionWithVFs", 0).ok());
  // The abandoned call still completes inside FM, with the VF list it was given.
  for (int i = 0; i < 50 && Active().empty(); ++i) std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{3}));
}

}  // namespace
}  // namespace gfp::adapters::fm
