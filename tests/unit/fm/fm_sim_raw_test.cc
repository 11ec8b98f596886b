// The simulator's C ABI called directly (no adapter), for the argument checks the adapter never
// exercises: they must match the real 535 library (reference/fabric-manager.md §5).
#include <cstring>

#include "adapters/fm/fabric_manager_library.h"
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using testing::FmSimTest;
using testing::UnixParams;

class FmSimRaw : public testing::FmSimRawTest {};

TEST_F(FmSimRaw, InitialisationRules) {
  abi::ConnectParamsV2 params = UnixParams();
  abi::fmHandle_t handle = nullptr;
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kUninitialized);
  EXPECT_EQ(fn().fmLibShutdown(), abi::kUninitialized);
  EXPECT_EQ(fn().fmLibInit(), abi::kSuccess);
  EXPECT_EQ(fn().fmLibInit(), abi::kInUse);
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kSuccess);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 1), abi::kSuccess);
  EXPECT_EQ(fn().fmLibShutdown(), abi::kSuccess);  // closes the handle too
  EXPECT_EQ(fn().fmLibInit(), abi::kSuccess);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kConnectionNotValid);
}

TEST_F(FmSimRaw, ConnectArgumentChecks) {
  ASSERT_EQ(fn().fmLibInit(), abi::kSuccess);
  abi::fmHandle_t handle = nullptr;
  abi::ConnectParamsV2 params = UnixParams();
  EXPECT_EQ(fn().fmConnect(nullptr, &handle), abi::kBadParam);
  EXPECT_EQ(fn().fmConnect(&params, nullptr), abi::kBadParam);
  params.timeoutMs = 0;
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kBadParam);
  params = UnixParams();
  params.version = 0x01000110;
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kVersionMismatch);
  params = UnixParams();
  params.addressIsUnixSocket = 0;  // disagrees with addressType and the path
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kBadParam);
  params = UnixParams();
  params.addressType = abi::kAddrInet;
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kBadParam);
  params = UnixParams();
  std::memset(params.addressInfo, 'x', sizeof(params.addressInfo));  // unterminated
  EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kBadParam);

  abi::ConnectParamsV1 v1{};
  v1.version = abi::kConnectParamsV1Version;
  std::strcpy(v1.addressInfo, "127.0.0.1:6666");
  v1.timeoutMs = 500;
  EXPECT_EQ(fn().fmConnect(&v1, &handle), abi::kSuccess);
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(fn().fmDisconnect(handle), abi::kSuccess);
  EXPECT_EQ(fn().fmDisconnect(handle), abi::kBadParam);  // unknown handle
  EXPECT_EQ(fn().fmDisconnect(nullptr), abi::kBadParam);
}

TEST_F(FmSimRaw, HandleAndVersionChecksInTheRealOrder) {
  ASSERT_EQ(fn().fmLibInit(), abi::kSuccess);
  abi::ConnectParamsV2 params = UnixParams();
  abi::fmHandle_t handle = nullptr;
  ASSERT_EQ(fn().fmConnect(&params, &handle), abi::kSuccess);
  auto list = std::make_unique<abi::FabricPartitionList>();
  int unknown_object = 0;
  abi::fmHandle_t unknown = &unknown_object;

  list->version = abi::kFabricPartitionListVersion;
  EXPECT_EQ(fn().fmGetSupportedFabricPartitions(nullptr, list.get()), abi::kBadParam);
  EXPECT_EQ(fn().fmGetSupportedFabricPartitions(handle, nullptr), abi::kBadParam);
  EXPECT_EQ(fn().fmGetSupportedFabricPartitions(unknown, list.get()), abi::kConnectionNotValid);
  list->version = abi::kFabricPartitionListVersion + 1;
  EXPECT_EQ(fn().fmGetSupportedFabricPartitions(unknown, list.get()), abi::kVersionMismatch);
  EXPECT_EQ(fn().fmGetSupportedFabricPartitions(handle, list.get()), abi::kVersionMismatch);
  list->version = abi::kFabricPartitionListVersion;
  ASSERT_EQ(fn().fmGetSupportedFabricPartitions(handle, list.get()), abi::kSuccess);
  EXPECT_EQ(list->numPartitions, 15u);
  EXPECT_STREQ(list->partitionInfo[0].gpuInfo[0].pciBusId, "00000000:00:00.0");
  EXPECT_STREQ(list->partitionInfo[0].gpuInfo[0].uuid, "");

  abi::ActivatedFabricPartitionList activated{};
  activated.version = abi::kActivatedFabricPartitionListVersion - 1;
  EXPECT_EQ(fn().fmSetActivatedFabricPartitions(handle, &activated), abi::kVersionMismatch);
  EXPECT_EQ(fn().fmSetActivatedFabricPartitions(handle, nullptr), abi::kBadParam);
  auto failed = std::make_unique<abi::NvlinkFailedDevices>();
  EXPECT_EQ(fn().fmGetNvlinkFailedDevices(handle, failed.get()), abi::kVersionMismatch);
  auto unsupported = std::make_unique<abi::UnsupportedFabricPartitionList>();
  EXPECT_EQ(fn().fmGetUnsupportedFabricPartitions(handle, unsupported.get()),
            abi::kVersionMismatch);
  EXPECT_EQ(fn().fmActivateFabricPartition(nullptr, 1), abi::kBadParam);
  EXPECT_EQ(fn().fmDeactivateFabricPartition(nullptr, 1), abi::kBadParam);
  EXPECT_EQ(fn().fmActivateFabricPartition(unknown, 1), abi::kConnectionNotValid);
  // Shared NVSwitch mode: activation with VFs is a vGPU-mode call.
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(handle, 1, nullptr, 0), abi::kNotSupported);
  EXPECT_EQ(fn().fmActivateFabricPartitionWithVFs(handle, 1, nullptr, 2), abi::kBadParam);
  EXPECT_EQ(fn().fmDisconnect(handle), abi::kSuccess);
}

TEST_F(FmSimRaw, MissingStateFileIsAGenericError) {
  ASSERT_EQ(fn().fmLibInit(), abi::kSuccess);
  ASSERT_EQ(setenv("NVFM_SIM_STATE", (state_path() + ".missing").c_str(), 1), 0);
  EXPECT_EQ(fn().fmLibShutdown(), abi::kGenericError);
  ASSERT_EQ(setenv("NVFM_SIM_STATE", state_path().c_str(), 1), 0);
}

TEST_F(FmSimRaw, ControlApiRejectsUnknownNames) {
  EXPECT_FALSE(sim().InjectFailure("fmNoSuchCall", -1).ok());
  EXPECT_FALSE(sim().SetLatency("fmNoSuchCall", 5).ok());
  EXPECT_FALSE(sim().Degrade(99, 1).ok());
  auto bad_table = fmsim::FmSimControl::Create(state_path(), "z900");
  ASSERT_FALSE(bad_table.ok());
  EXPECT_NE(bad_table.status().message().find("z900"), std::string::npos);
  auto missing = fmsim::FmSimControl::Open(state_path() + ".none");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace gfp::adapters::fm
