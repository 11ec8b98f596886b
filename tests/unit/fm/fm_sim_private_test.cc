// The simulator's zero-latency mode ($NVFM_SIM_PRIVATE=1, for benchmarks): the state file is read
// once, at the process's first call, and then the state lives in the process's memory.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "adapters/fm/fabric_manager_library.h"
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using testing::FmSimTest;
using testing::UnixParams;

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class FmSimPrivate : public testing::FmSimRawTest {
 protected:
  void SetUp() override {
    FmSimRawTest::SetUp();
    ASSERT_EQ(setenv("NVFM_SIM_PRIVATE", "1", 1), 0);
  }
  void TearDown() override {
    FmSimRawTest::TearDown();
    unsetenv("NVFM_SIM_PRIVATE");
  }

  abi::fmHandle_t Connect() {
    EXPECT_EQ(fn().fmLibInit(), abi::kSuccess);
    abi::ConnectParamsV2 params = UnixParams();
    abi::fmHandle_t handle = nullptr;
    EXPECT_EQ(fn().fmConnect(&params, &handle), abi::kSuccess);
    return handle;
  }
};

TEST_F(FmSimPrivate, ActivatesAndDeactivatesInMemoryWithoutRewritingTheStateFile) {
  const std::string before = FileText(state_path());
  const std::string calls_before = FileText(state_path() + ".calls");  // SetUp's fmLibShutdown
  const auto mtime = std::filesystem::last_write_time(state_path());
  abi::fmHandle_t handle = Connect();

  // H100 table: partition 0 holds all 8 GPUs, partition 2 GPUs 5-8.
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kSuccess);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kInUse);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 0), abi::kInUse);  // overlaps partition 2
  auto list = std::make_unique<abi::FabricPartitionList>();
  list->version = abi::kFabricPartitionListVersion;
  ASSERT_EQ(fn().fmGetSupportedFabricPartitions(handle, list.get()), abi::kSuccess);
  EXPECT_EQ(list->partitionInfo[2].partitionId, 2u);
  EXPECT_EQ(list->partitionInfo[2].isActive, 1u);
  EXPECT_EQ(fn().fmDeactivateFabricPartition(handle, 2), abi::kSuccess);
  EXPECT_EQ(fn().fmDeactivateFabricPartition(handle, 2), abi::kUninitialized);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 0), abi::kSuccess);

  // Nothing reached the file: same bytes, same mtime, no call log, FM "outside" sees nothing.
  EXPECT_EQ(FileText(state_path()), before);
  EXPECT_EQ(std::filesystem::last_write_time(state_path()), mtime);
  EXPECT_EQ(FileText(state_path() + ".calls"), calls_before);
  auto active = sim().ActivePartitions();
  ASSERT_TRUE(active.ok()) << active.status().message();
  EXPECT_TRUE(active->empty());
}

TEST_F(FmSimPrivate, ReadsTheStateFileOnceAtTheFirstCall) {
  ASSERT_TRUE(sim().ActivateDirectly(2).ok());  // before the first call: it is read
  abi::fmHandle_t handle = Connect();
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kInUse);

  // After the first call the control API no longer reaches the library.
  ASSERT_TRUE(sim().InjectFailure("fmDeactivateFabricPartition", abi::kTimeout).ok());
  ASSERT_TRUE(sim().DeactivateDirectly(2).ok());
  EXPECT_EQ(fn().fmDeactivateFabricPartition(handle, 2), abi::kSuccess);
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kSuccess);
}

TEST_F(FmSimPrivate, FaultsInTheStateFileDoNotApply) {
  ASSERT_TRUE(sim().InjectFailure("fmActivateFabricPartition", abi::kTimeout, 5).ok());
  ASSERT_TRUE(sim().SetLatency("*", 5000).ok());  // would make this test take seconds
  abi::fmHandle_t handle = Connect();
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 3), abi::kSuccess);
}

TEST_F(FmSimPrivate, UnsetMeansTheSharedStateFile) {
  unsetenv("NVFM_SIM_PRIVATE");
  abi::fmHandle_t handle = Connect();
  EXPECT_EQ(fn().fmActivateFabricPartition(handle, 2), abi::kSuccess);
  auto active = sim().ActivePartitions();
  ASSERT_TRUE(active.ok()) << active.status().message();
  EXPECT_EQ(*active, std::vector<std::uint32_t>{2});
}

}  // namespace
}  // namespace gfp::adapters::fm
