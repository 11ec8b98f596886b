// ListedHolders: which pod held a device in kubelet's last PodResources listing.
#include "plugin/core/listed_holders.h"

#include <gtest/gtest.h>

namespace gfp::plugin::core {
namespace {

using adapters::kubelet::ContainerDeviceAssignment;

const std::string kGpu = "nvidia.com/GH100_H100_SXM5_80GB";

TEST(ListedHolders, NamesEachHoldingPodWithTheAskedDevicesInAskedOrder) {
  ListedHolders holders;
  holders.Remember({{"vms", "vm-a", "compute", kGpu, {"0000:1b:00.0", "0000:43:00.0"}},
                    {"vms", "vm-b", "compute", kGpu, {"0000:52:00.0"}},
                    {"vms", "vm-c", "compute", kGpu, {"0000:61:00.0"}}},
                   1'000'000);
  const auto found =
      holders.HoldersOf(kGpu, {"0000:52:00.0", "0000:9d:00.0", "0000:43:00.0", "0000:1b:00.0"});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].pod, "vms/vm-a");
  EXPECT_EQ(found[0].devices, (std::vector<std::string>{"0000:43:00.0", "0000:1b:00.0"}));
  EXPECT_EQ(found[1].pod, "vms/vm-b");
  EXPECT_EQ(found[1].devices, (std::vector<std::string>{"0000:52:00.0"}));
  EXPECT_EQ(holders.listed_at(), 1'000'000);
}

TEST(ListedHolders, AnotherResourcesDeviceOfTheSameIdIsNotAHolder) {
  ListedHolders holders;
  holders.Remember({{"vms", "vm-a", "compute", "example.com/nic", {"0000:1b:00.0"}}}, 5);
  EXPECT_TRUE(holders.HoldersOf(kGpu, {"0000:1b:00.0"}).empty());
}

TEST(ListedHolders, EachListingReplacesTheLast) {
  ListedHolders holders;
  holders.Remember({{"vms", "vm-a", "compute", kGpu, {"0000:1b:00.0"}}}, 5);
  holders.Remember({}, 9);
  EXPECT_TRUE(holders.HoldersOf(kGpu, {"0000:1b:00.0"}).empty());
  EXPECT_EQ(holders.listed_at(), 9);
}

}  // namespace
}  // namespace gfp::plugin::core
