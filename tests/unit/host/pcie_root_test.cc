// resource.kubernetes.io/pcieRoot (SPEC §11): the root folder of a GPU's real sysfs path, on a
// fake node built like the real ones and on hand-made trees with bridges and hostile links.
#include "adapters/host/pcie_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// sys/devices/<path> with a bus entry sys/bus/pci/devices/<bdf> pointing at it.
void Function(const fs::path& sys, const std::string& path, const std::string& bdf) {
  fs::create_directories(sys / "devices" / path);
  fs::create_directories(sys / "bus/pci/devices");
  fs::create_symlink(fs::path("../../../devices") / path, sys / "bus/pci/devices" / bdf);
}

TEST(PcieRoot, IsTheRootFolderAboveTheBridges) {
  gfp::testing::TempDir dir;
  const fs::path sys = dir.path() / "sys";
  Function(sys, "pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1b:00.0", "0000:1b:00.0");
  Function(sys, "pci0001:c0/0001:c0:03.1/0001:c3:00.0", "0001:c3:00.0");
  EXPECT_EQ(PcieRootOf(sys, "0000:1b:00.0").value(), "pci0000:17");
  EXPECT_EQ(PcieRootOf(sys, "0001:c3:00.0").value(), "pci0001:c0");
}

// The fake node puts each function below its own pci<domain>:<bus> folder.
TEST(PcieRoot, OfEveryGpuOfAFakeNode) {
  gfp::testing::TempDir dir;
  auto node = gfp::sim::BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok()) << node.status().message();
  for (const auto& bdf : node->GpuBdfs()) {
    const auto root = PcieRootOf(dir.path() / "sys", bdf);
    ASSERT_TRUE(root.ok()) << root.status().message();
    EXPECT_EQ(*root, "pci" + bdf.substr(0, 7));
  }
}

TEST(PcieRoot, HostileAndBrokenEntriesAreRefusedInWords) {
  gfp::testing::TempDir dir;
  const fs::path sys = dir.path() / "sys";
  Function(sys, "platform/soc/0000:01:00.0", "0000:01:00.0");  // not below a PCI root
  fs::create_directories(dir.path() / "etc");
  fs::create_symlink("../../../../etc", sys / "bus/pci/devices/0000:02:00.0");
  const auto not_pci = PcieRootOf(sys, "0000:01:00.0");
  EXPECT_EQ(not_pci.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(not_pci.status().message(), HasSubstr("not below a"));
  const auto outside = PcieRootOf(sys, "0000:02:00.0");
  EXPECT_EQ(outside.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(outside.status().message(), HasSubstr("leads outside"));
  EXPECT_EQ(PcieRootOf(sys, "0000:03:00.0").status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace gfp::adapters::host
