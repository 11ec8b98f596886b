// The partition-list decoder on structs written by hand (no simulator): the rows of
// docs/bad-input.md §8 the simulator's hostile replies do not produce.
#include "adapters/fm/fm_decode.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

namespace gfp::adapters::fm {
namespace {

// A valid one-partition list: partition 7, inactive, two GPUs (physical ids 1 and 2).
std::unique_ptr<abi::FabricPartitionList> TwoGpuList() {
  auto list = std::make_unique<abi::FabricPartitionList>();
  std::memset(list.get(), 0, sizeof(*list));
  list->numPartitions = 1;
  abi::FabricPartitionInfo& p = list->partitionInfo[0];
  p.partitionId = 7;
  p.numGpus = 2;
  for (unsigned g = 0; g < 2; ++g) {
    abi::FabricPartitionGpuInfo& gpu = p.gpuInfo[g];
    gpu.physicalId = g + 1;
    std::snprintf(gpu.uuid, sizeof(gpu.uuid), "GPU-0000000%u", g);
    std::snprintf(gpu.pciBusId, sizeof(gpu.pciBusId), "00000000:1%u:00.0", g);
    gpu.maxNumNvLinks = 18;
    gpu.numNvLinksAvailable = 18;
  }
  return list;
}

void ExpectMalformed(const abi::FabricPartitionList& list, const std::string& detail) {
  auto decoded = DecodePartitionList(list);
  ASSERT_FALSE(decoded.ok()) << "accepted a list that should fail with: " << detail;
  EXPECT_EQ(decoded.status().code(), ErrorCode::kDataLoss);
  EXPECT_NE(decoded.status().message().find("Fabric Manager returned malformed data: " + detail),
            std::string::npos)
      << decoded.status().message();
}

TEST(FmDecode, AValidListDecodes) {
  auto decoded = DecodePartitionList(*TwoGpuList());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->size(), 1u);
  EXPECT_EQ((*decoded)[0].id, 7u);
  EXPECT_FALSE((*decoded)[0].active);
  EXPECT_EQ((*decoded)[0].pci_bus_ids[1], "00000000:11:00.0");
}

TEST(FmDecode, NonPrintableByteInAStringIsNamedWithItsOffset) {
  for (const unsigned char bad : {0x01, 0x1b, 0x7f, 0xc3}) {
    auto list = TwoGpuList();
    list->partitionInfo[0].gpuInfo[1].pciBusId[3] = static_cast<char>(bad);
    ExpectMalformed(*list, "partition 7 GPU 1 pciBusId contains a non-printable byte at offset 3");
  }
  auto list = TwoGpuList();
  list->partitionInfo[0].gpuInfo[0].uuid[0] = '\n';
  ExpectMalformed(*list, "partition 7 GPU 0 uuid contains a non-printable byte at offset 0");
}

TEST(FmDecode, IsActiveMustBeZeroOrOne) {
  for (const unsigned bad : {2u, 255u, 0xffffffffu}) {
    auto list = TwoGpuList();
    list->partitionInfo[0].isActive = bad;
    ExpectMalformed(*list, "partition 7 isActive = " + std::to_string(bad) + " (expected 0 or 1)");
  }
  auto list = TwoGpuList();
  list->partitionInfo[0].isActive = 1;
  auto decoded = DecodePartitionList(*list);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_TRUE((*decoded)[0].active);
}

}  // namespace
}  // namespace gfp::adapters::fm
