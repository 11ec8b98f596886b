// The simulator's vGPU mode (FABRIC_MODE=2) through its C ABI: fmActivateFabricPartitionWithVFs
// with FM's rules (reference/fabric-manager.md §1 row 7, upstream-behaviour.md §3.3: one VF per
// GPU, in the partition's GPU order, BADPARAM otherwise), the mode knob, and the VF lists the
// simulator records for tests.
#include <cstdio>
#include <cstring>

#include "adapters/fm/fabric_manager_library.h"
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using testing::FmSimTest;
using Vfs = std::vector<std::string>;

// h100 table: GPU (physical id) g has its PF on bus kBus[g] and VFs .4 and .5 there.
constexpr unsigned kBus[] = {0, 0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf};

std::string VfOf(std::uint32_t gpu, unsigned function = 4) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0000:%02x:00.%u", kBus[gpu], function);
  return buffer;
}

abi::PciDevice Pci(std::uint32_t gpu, unsigned function = 4) {
  return abi::PciDevice{0, kBus[gpu], 0, function};
}

class FmSimVf : public testing::FmSimRawTest {
 protected:
  void SetUp() override {
    FmSimRawTest::SetUp();
    ASSERT_EQ(fn().fmLibInit(), abi::kSuccess);
    abi::ConnectParamsV2 params = testing::UnixParams();
    ASSERT_EQ(fn().fmConnect(&params, &handle_), abi::kSuccess);
    for (std::uint32_t gpu = 1; gpu <= 8; ++gpu) {
      ASSERT_TRUE(sim().SetVfParent(VfOf(gpu, 4), gpu).ok());
      ASSERT_TRUE(sim().SetVfParent(VfOf(gpu, 5), gpu).ok());
    }
  }
  void UseVgpuMode() { ASSERT_TRUE(sim().SetFabricMode(fmsim::FabricMode::kVgpu).ok()); }

  int ActivateWithVfs(std::uint32_t partition, std::vector<abi::PciDevice> vfs) {
    return fn().fmActivateFabricPartitionWithVFs(handle_, partition, vfs.data(),
                                                 static_cast<unsigned>(vfs.size()));
  }

  fmsim::VfActivation LastVfActivation() {
    auto activations = sim().VfActivations();
    EXPECT_TRUE(activations.ok()) << activations.status().message();
    if (!activations.ok() || activations->empty()) return {};
    return activations->back();
  }

  std::map<std::uint32_t, Vfs> ActiveVfs() {
    auto active = sim().ActiveVfs();
    EXPECT_TRUE(active.ok()) << active.status().message();
    return active.ok() ? *active : std::map<std::uint32_t, Vfs>{};
  }

  abi::fmHandle_t handle_ = nullptr;
};

TEST_F(FmSimVf, SharedNvswitchModeRefusesVfActivation) {
  ASSERT_EQ(sim().GetFabricMode().value(), fmsim::FabricMode::kSharedNvswitch);  // the default
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kNotSupported);
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(handle_, 3, nullptr, 0), abi::kNotSupported);
  EXPECT_TRUE(Active().empty());
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 3), abi::kSuccess);
}

TEST_F(FmSimVf, VgpuModeRefusesWholeGpuActivation) {
  UseVgpuMode();
  EXPECT_EQ(fn().fmActivateFabricPartition(handle_, 3), abi::kNotSupported);
  EXPECT_TRUE(Active().empty());
  auto calls = CallsOf("fmActivateFabricPartition");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].note, "FABRIC_MODE=2 (vGPU) activates partitions with VFs");
}

TEST_F(FmSimVf, ActivatesWithOneVfPerGpuInThePartitionsOrder) {
  UseVgpuMode();
  ASSERT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3, 5)}), abi::kSuccess);  // partition 3 = GPUs 1,3
  ASSERT_EQ(ActivateWithVfs(8, {Pci(2)}), abi::kSuccess);             // partition 8 = GPU 2
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{3, 8}));
  EXPECT_EQ(ActiveVfs(),
            (std::map<std::uint32_t, Vfs>{{3, {VfOf(1), VfOf(3, 5)}}, {8, {VfOf(2)}}}));
  EXPECT_EQ(LastVfActivation(), (fmsim::VfActivation{8, {VfOf(2)}, abi::kSuccess, ""}));
  auto calls = CallsOf("fmActivateFabricPartitionWithVFs");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].args, "3 numVfs=2 vfs=[0000:1b:00.4,0000:52:00.5]");

  ASSERT_EQ(fn().fmDeactivateFabricPartition(handle_, 3), abi::kSuccess);
  EXPECT_EQ(ActiveVfs(), (std::map<std::uint32_t, Vfs>{{8, {VfOf(2)}}}));
  ASSERT_EQ(fn().fmDeactivateFabricPartition(handle_, 8), abi::kSuccess);
  ASSERT_EQ(ActivateWithVfs(0, {Pci(1), Pci(2), Pci(3), Pci(4), Pci(5), Pci(6), Pci(7), Pci(8)}),
            abi::kSuccess);  // all eight
  EXPECT_EQ(ActiveVfs().at(0).size(), 8u);
}

struct BadVfCase {
  const char* name;
  std::uint32_t partition;
  std::vector<abi::PciDevice> vfs;
  const char* note;
};

TEST_F(FmSimVf, EveryViolationOfTheVfRulesIsBadParam) {
  UseVgpuMode();
  const std::vector<BadVfCase> cases = {
      {"no VFs", 3, {}, "0 VFs for a partition of 2 GPUs"},
      {"too few", 3, {Pci(1)}, "1 VFs for a partition of 2 GPUs"},
      {"too many", 3, {Pci(1), Pci(3), Pci(2)}, "3 VFs for a partition of 2 GPUs"},
      {"unknown VF", 3, {Pci(1), Pci(3, 6)}, "VF 0000:52:00.6 has no known parent GPU"},
      {"field out of PCI range",
       8,
       {abi::PciDevice{0, 0x143, 0, 4}},
       "VF 0000:143:00.4 has no known"},
      {"two VFs of one GPU", 3, {Pci(1, 4), Pci(1, 5)}, "two VFs of GPU 1"},
      {"one VF twice", 3, {Pci(1), Pci(1)}, "two VFs of GPU 1"},
      {"parent outside",
       3,
       {Pci(1), Pci(2)},
       "VF 0000:43:00.4 belongs to GPU 2, which is not in "
       "partition 3"},
      {"wrong order",
       3,
       {Pci(3), Pci(1)},
       "VF 0000:52:00.4 (GPU 3) is at position 0 where the "
       "partition has GPU 1"},
      {"unknown partition", 99, {Pci(1)}, ""},
  };
  for (const BadVfCase& bad : cases) {
    SCOPED_TRACE(bad.name);
    EXPECT_EQ(ActivateWithVfs(bad.partition, bad.vfs), abi::kBadParam);
    EXPECT_NE(LastVfActivation().note.find(bad.note), std::string::npos) << LastVfActivation().note;
  }
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(handle_, 3, nullptr, 2), abi::kBadParam);
  EXPECT_EQ(LastVfActivation().note, "vfList is NULL with numVfs > 0");
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(handle_, 3, nullptr, 0), abi::kBadParam);
  std::vector<abi::PciDevice> seventeen(17, Pci(1));
  EXPECT_EQ(ActivateWithVfs(3, seventeen), abi::kBadParam);
  EXPECT_EQ(LastVfActivation().note, "more than 16 VFs");
  EXPECT_TRUE(LastVfActivation().vfs.empty());  // past FM's limit nothing is read
  EXPECT_TRUE(Active().empty());
  EXPECT_TRUE(ActiveVfs().empty());
}

TEST_F(FmSimVf, ActiveOrOverlappingPartitionIsInUse) {
  UseVgpuMode();
  ASSERT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kSuccess);
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kInUse);
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1, 5), Pci(3, 5)}), abi::kInUse);  // other VFs, same GPUs
  EXPECT_EQ(ActivateWithVfs(1, {Pci(1), Pci(2), Pci(3), Pci(4)}), abi::kInUse);
  EXPECT_EQ(ActivateWithVfs(7, {Pci(1)}), abi::kInUse);            // single-GPU partition of GPU 1
  EXPECT_EQ(ActivateWithVfs(4, {Pci(2), Pci(4)}), abi::kSuccess);  // GPUs 2,4: disjoint
  EXPECT_EQ(ActiveVfs().at(3), (Vfs{VfOf(1), VfOf(3)}));  // the refused calls changed nothing
}

TEST_F(FmSimVf, ModeFaultsAndDegradationApplyAsInSharedMode) {
  UseVgpuMode();
  ASSERT_TRUE(sim().SetMode(fmsim::Mode::kStarting).ok());
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kNotConfigured);
  ASSERT_TRUE(sim().SetMode(fmsim::Mode::kRunning).ok());
  ASSERT_TRUE(sim().InjectFailure("fmActivateFabricPartitionWithVFs", abi::kTimeout).ok());
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kTimeout);
  ASSERT_TRUE(sim().Degrade(3, 10).ok());
  EXPECT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kNvlinkError);
  int unknown_object = 0;
  std::vector<abi::PciDevice> vfs = {Pci(1), Pci(3)};
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(&unknown_object, 3, vfs.data(), 2),
            abi::kConnectionNotValid);
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(nullptr, 3, vfs.data(), 2), abi::kBadParam);
  EXPECT_TRUE(Active().empty());
}

TEST_F(FmSimVf, RestartsKeepOrDropTheVfLists) {
  UseVgpuMode();
  ASSERT_EQ(ActivateWithVfs(3, {Pci(1), Pci(3)}), abi::kSuccess);
  ASSERT_EQ(ActivateWithVfs(4, {Pci(2), Pci(4)}), abi::kSuccess);
  ASSERT_TRUE(sim().Restart(/*resiliency=*/true).ok());
  EXPECT_EQ(ActiveVfs().size(), 2u);
  abi::ConnectParamsV2 params = testing::UnixParams();
  ASSERT_EQ(fn().fmConnect(&params, &handle_), abi::kSuccess);
  abi::ActivatedFabricPartitionList resync{};
  resync.version = abi::kActivatedFabricPartitionListVersion;
  resync.numPartitions = 1;
  resync.partitionIds[0] = 4;  // partition 3 did not survive
  ASSERT_EQ(fn().fmSetActivatedFabricPartitions(handle_, &resync), abi::kSuccess);
  EXPECT_EQ(ActiveVfs(), (std::map<std::uint32_t, Vfs>{{4, {VfOf(2), VfOf(4)}}}));
  ASSERT_TRUE(sim().Restart(/*resiliency=*/false).ok());
  EXPECT_TRUE(ActiveVfs().empty());
  EXPECT_EQ(sim().GetFabricMode().value(), fmsim::FabricMode::kVgpu);  // kept across restarts
}

TEST_F(FmSimVf, ControlApiGuardsTheModeAndTheVfParents) {
  ASSERT_EQ(fn().fmActivateFabricPartition(handle_, 3), abi::kSuccess);
  Status busy = sim().SetFabricMode(fmsim::FabricMode::kVgpu);
  EXPECT_EQ(busy.code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(busy.message(),
            "cannot change the simulated Fabric Manager's fabric mode while 1 partition(s) are "
            "active; deactivate them first");
  ASSERT_TRUE(sim().DeactivateDirectly(3).ok());
  ASSERT_TRUE(sim().SetFabricMode(fmsim::FabricMode::kVgpu).ok());

  Status malformed = sim().SetVfParent("41:00.4", 3);
  EXPECT_EQ(malformed.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(malformed.message(),
            "\"41:00.4\" is not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:1b:00.0)");
  Status no_gpu = sim().SetVfParent("0000:41:00.4", 9);
  EXPECT_EQ(no_gpu.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(no_gpu.message(), "GPU 9 (parent of VF 0000:41:00.4) is not in table h100");

  // Any spelling is stored canonically, as FM would match it.
  ASSERT_TRUE(sim().SetVfParent("00000000:41:00.4", 7).ok());
  EXPECT_EQ(ActivateWithVfs(13, {abi::PciDevice{0, 0x41, 0, 4}}), abi::kSuccess);  // GPU 7
  ASSERT_TRUE(sim().ClearVfParents().ok());
  ASSERT_EQ(fn().fmDeactivateFabricPartition(handle_, 13), abi::kSuccess);
  EXPECT_EQ(ActivateWithVfs(13, {abi::PciDevice{0, 0x41, 0, 4}}), abi::kBadParam);

  // Drift: another actor activated a partition with VFs.
  ASSERT_TRUE(sim().ActivateDirectly(5, {VfOf(5), VfOf(7)}).ok());
  EXPECT_EQ(ActiveVfs(), (std::map<std::uint32_t, Vfs>{{5, {VfOf(5), VfOf(7)}}}));
  ASSERT_TRUE(sim().DeactivateDirectly(5).ok());
  EXPECT_TRUE(ActiveVfs().empty());

  // The knob and the map live in the state file, so another controller sees them.
  ASSERT_TRUE(sim().SetVfParent(VfOf(1), 1).ok());
  auto reopened = fmsim::FmSimControl::Open(state_path());
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->GetFabricMode().value(), fmsim::FabricMode::kVgpu);
  EXPECT_EQ(ActivateWithVfs(7, {Pci(1)}), abi::kSuccess);
}

}  // namespace
}  // namespace gfp::adapters::fm
