#include "adapters/host/vfio_nodes.h"

#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

TEST(HostVfioNodes, IommufdFollowsDevIommu) {
  gfp::testing::TempDir with;
  gfp::testing::TempDir without;
  auto a = sim::BuildFakeNode(with.path(), {sim::NodePreset::kHgxH100, true, true, true});
  auto b = sim::BuildFakeNode(without.path(), {sim::NodePreset::kHgxH100, false, true, true});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(IommufdAvailable(a->dev_root));
  EXPECT_FALSE(IommufdAvailable(b->dev_root));
  EXPECT_EQ(*DetectIommufd(b->dev_root), false);
}

TEST(HostVfioNodes, StatErrorOtherThanMissingIsReported) {
  gfp::testing::TempDir dir;
  // <dev_root> is a regular file, so <dev_root>/iommu is ENOTDIR: still "not available".
  const auto file = dir.Write("dev", "");
  EXPECT_EQ(*DetectIommufd(file), false);
  // A name too long for the kernel is a real stat error.
  auto result = DetectIommufd(dir.path() / std::string(300, 'x'));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("could not determine iommufd support: stat "),
            std::string::npos);
  EXPECT_NE(result.status().message().find("File name too long"), std::string::npos);
  EXPECT_FALSE(IommufdAvailable(dir.path() / std::string(300, 'x')));
}

TEST(HostVfioNodes, GroupNodeHealth) {
  gfp::testing::TempDir dir;
  auto node = sim::BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok());
  const std::string group = node->gpus[0].iommu_group;
  EXPECT_TRUE(CheckVfioGroupNode(node->dev_root, group).ok());

  ASSERT_TRUE(node->RemoveVfioGroupNode(group).ok());
  const Status missing = CheckVfioGroupNode(node->dev_root, group);
  EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
  EXPECT_EQ(missing.message(),
            "VFIO group node " + (node->dev_root / "vfio" / group).string() + " is missing");
  EXPECT_TRUE(CheckVfioGroupNode(node->dev_root, node->gpus[1].iommu_group).ok());

  ASSERT_TRUE(node->RecreateVfioGroupNode(group).ok());
  EXPECT_TRUE(CheckVfioGroupNode(node->dev_root, group).ok());
}

}  // namespace
}  // namespace gfp::adapters::host
