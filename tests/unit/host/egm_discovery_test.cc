// Grace EGM discovery and the Allocate rule of the Go plugin (upstream-behaviour.md §1.9).
#include "adapters/host/egm_discovery.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"
#include "sim/node/fake_node.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using Bdfs = std::vector<std::string>;

EgmDevice Egm(const std::string& name, Bdfs gpus, bool node = true) {
  return EgmDevice{name, std::move(gpus), node};
}

TEST(HostEgmDiscovery, GraceNodeGivesOneEgmPerGpu) {
  gfp::testing::TempDir dir;
  auto node = sim::BuildVgpuNode(dir.path(), {sim::VgpuNodePreset::kGraceGh200});
  ASSERT_TRUE(node.ok()) << node.status().message();
  auto found = DiscoverEgmDevices(node->sysfs_root, node->dev_root);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_THAT(found->warnings, IsEmpty());
  ASSERT_EQ(found->devices.size(), 4u);
  EXPECT_EQ(found->devices[1], Egm("egm1", {"0019:01:00.0"}));
  const Bdfs request = {"0019:01:00.0", "0039:01:00.0"};
  EXPECT_THAT(EgmDeviceNodesFor(found->devices, request), ElementsAre("/dev/egm1", "/dev/egm3"));
  // <dev-root>/egmN gone: not offered (checked at discovery, as Go does per Allocate).
  fs::remove(node->dev_root / "egm3");
  found = DiscoverEgmDevices(node->sysfs_root, node->dev_root);
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(EgmDeviceNodesFor(found->devices, request), ElementsAre("/dev/egm1"));
}

TEST(HostEgmDiscovery, NoEgmClassMeansNoEgms) {
  gfp::testing::TempDir dir;
  auto node = sim::BuildFakeNode(dir.path(), {});
  ASSERT_TRUE(node.ok());
  auto found = DiscoverEgmDevices(node->sysfs_root, node->dev_root);
  ASSERT_TRUE(found.ok());
  EXPECT_THAT(found->devices, IsEmpty());
  EXPECT_THAT(found->warnings, IsEmpty());
}

// §1.9: added only if ALL its GPU BDFs are in this container's request, case-insensitively.
TEST(HostEgmRule, EveryGpuOfTheEgmMustBeRequested) {
  const std::vector<EgmDevice> egms = {Egm("egm0", {"0009:01:00.0", "0019:01:00.0"}),
                                       Egm("egm1", {"0029:01:00.0"})};
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"0009:01:00.0"}), IsEmpty());
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"0019:01:00.0", "0009:01:00.0"}),
              ElementsAre("/dev/egm0"));
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"0009:01:00.0", "0019:01:00.0", "0029:01:00.0"}),
              ElementsAre("/dev/egm0", "/dev/egm1"));
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{}), IsEmpty());
}

TEST(HostEgmRule, BdfsCompareCaseInsensitively) {
  const std::vector<EgmDevice> egms = {Egm("egm0", {"000a:01:00.0"})};
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"000A:01:00.0"}), ElementsAre("/dev/egm0"));
}

TEST(HostEgmRule, MissingDeviceNodeIsNeverAdded) {
  const std::vector<EgmDevice> egms = {Egm("egm0", {"0009:01:00.0"}, false)};
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"0009:01:00.0"}), IsEmpty());
}

TEST(HostEgmRule, SortedByPathAsGoSortsStrings) {
  const std::vector<EgmDevice> egms = {Egm("egm2", {"0009:01:00.0"}),
                                       Egm("egm10", {"0009:01:00.0"})};
  EXPECT_THAT(EgmDeviceNodesFor(egms, Bdfs{"0009:01:00.0"}),
              ElementsAre("/dev/egm10", "/dev/egm2"));
}

class HostEgmHandMade : public ::testing::Test {
 protected:
  void Egm(const std::string& name, const std::string& gpu_devices) {
    dir_.Write("sys/class/egm/" + name + "/gpu_devices", gpu_devices);
    dir_.Write("dev/" + name, "");
  }
  EgmDiscovery Discover() {
    auto found = DiscoverEgmDevices(dir_.path() / "sys", dir_.path() / "dev");
    EXPECT_TRUE(found.ok()) << found.status().message();
    return found.ok() ? *found : EgmDiscovery();
  }
  gfp::testing::TempDir dir_;
};

TEST_F(HostEgmHandMade, WhitespaceListOfGpusInAnySpelling) {
  Egm("egm0", "0009:01:00.0 0019:01:00.0\n\t00000029:01:00.0\n");
  const EgmDiscovery found = Discover();
  EXPECT_THAT(found.warnings, IsEmpty());
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_THAT(found.devices[0].gpu_bdfs,
              ElementsAre("0009:01:00.0", "0019:01:00.0", "0029:01:00.0"));
}

TEST_F(HostEgmHandMade, BadEntriesAreSkippedWithWarnings) {
  Egm("egm0", "\n");
  Egm("egm1", "0009:01:00.0 /etc/passwd\n");
  Egm("egm2", std::string(1 << 20, '0'));
  Egm("egmx", "0009:01:00.0\n");
  Egm("egm3", "0009:01:00.0\n");
  const EgmDiscovery found = Discover();
  ASSERT_EQ(found.devices.size(), 1u);
  EXPECT_EQ(found.devices[0].name, "egm3");
  ASSERT_EQ(found.warnings.size(), 4u);
  EXPECT_EQ(found.warnings[0], "egm0: skipped: gpu_devices is empty");
  EXPECT_EQ(found.warnings[1],
            "egm1: skipped: gpu_devices entry \"/etc/passwd\" is not a PCI address");
  EXPECT_THAT(found.warnings[2], HasSubstr("egm2: skipped: cannot read gpu_devices: "));
  EXPECT_EQ(found.warnings[3], "egmx: skipped: not an egmN device");
}

TEST_F(HostEgmHandMade, ClassEntryLeadingOutsideTheSysfsRootIsNotFollowed) {
  dir_.Write("elsewhere/gpu_devices", "0009:01:00.0\n");
  fs::create_directories(dir_.path() / "sys/class/egm");
  fs::create_symlink(dir_.path() / "elsewhere", dir_.path() / "sys/class/egm/egm0");
  const EgmDiscovery found = Discover();
  EXPECT_THAT(found.devices, IsEmpty());
  EXPECT_THAT(found.warnings, ElementsAre(HasSubstr("egm0: skipped: leads outside ")));
}

}  // namespace
}  // namespace gfp::adapters::host
