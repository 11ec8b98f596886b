#include <gtest/gtest.h>

#include "cli/module_mapping_fm.h"

namespace gfp::cli {
namespace {

adapters::fm::PartitionInfo Partition(std::uint32_t id, std::vector<std::uint32_t> modules,
                                      std::vector<std::string> bus_ids) {
  adapters::fm::PartitionInfo p;
  p.id = id;
  p.physical_ids = std::move(modules);
  p.pci_bus_ids = std::move(bus_ids);
  return p;
}

TEST(FmMapping, A100ClassBusIdsGiveTheMapping) {
  auto mapping =
      MappingFromFmPartitions({Partition(0, {1, 2}, {"00000000:47:00.0", "00000000:4E:00.0"}),
                               Partition(1, {2}, {"00000000:4E:00.0"})});
  ASSERT_TRUE(mapping.ok()) << mapping.status().message();
  EXPECT_EQ(*mapping,
            (std::map<std::string, std::uint32_t>{{"0000:47:00.0", 1}, {"0000:4e:00.0", 2}}));
}

TEST(FmMapping, H100ClassEmptyBusIdsNameTheModulesAndTheWayOut) {
  auto mapping = MappingFromFmPartitions(
      {Partition(0, {1, 2, 3}, {"00000000:00:00.0", "", "00000000:00:00.0"})});
  ASSERT_FALSE(mapping.ok());
  EXPECT_EQ(mapping.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(mapping.status().message(),
            "Fabric Manager reports no PCI bus id for modules 1, 2, 3 (H100 and later systems "
            "leave pciBusId empty); generate the file with --from-nvidia-smi instead "
            "(docs/module-mapping.md)");
}

TEST(FmMapping, ContradictionsAreRefused) {
  auto moved = MappingFromFmPartitions(
      {Partition(0, {1}, {"00000000:47:00.0"}), Partition(1, {1}, {"00000000:4E:00.0"})});
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.status().message().find("partition 1, module 1: reported at 0000:4e:00.0 here "
                                          "and at 0000:47:00.0 in another partition"),
            std::string::npos)
      << moved.status().message();
  auto shared =
      MappingFromFmPartitions({Partition(0, {1, 2}, {"00000000:47:00.0", "0000:47:00.0"})});
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("GPU 0000:47:00.0 is also reported as module 1"),
            std::string::npos)
      << shared.status().message();
  auto garbage = MappingFromFmPartitions({Partition(3, {5}, {"bus\n5"})});
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("pciBusId \"bus\\n5\" is not a PCI address"),
            std::string::npos)
      << garbage.status().message();
}

TEST(FmMapping, NoPartitionsAtAll) {
  auto mapping = MappingFromFmPartitions({});
  ASSERT_FALSE(mapping.ok());
  EXPECT_NE(mapping.status().message().find("no supported partitions"), std::string::npos);
}

}  // namespace
}  // namespace gfp::cli
