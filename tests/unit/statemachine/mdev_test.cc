// mdev vGPUs in the state machine (SPEC §9, upstream-behaviour.md §1.4): the device kind and
// parent GPU are journaled, survive a snapshot, and Fabric Manager has no say over an mdev.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/preferred.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::H100Node;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kMdevResource = "nvidia.com/GRID_A100-4C";
constexpr const char* kMdev1 = "6a3e2b10-5c7d-4f1e-8a9b-000000000001";
constexpr const char* kMdev2 = "6a3e2b10-5c7d-4f1e-8a9b-000000000002";

events::Device Mdev(const std::string& uuid, const std::string& parent, int numa) {
  events::Device d;
  d.set_bdf(uuid);
  d.set_resource(kMdevResource);
  d.set_numa_node(numa);
  d.set_kind(events::DEVICE_KIND_MDEV);
  d.set_parent_bdf(parent);
  return d;
}

class MdevTest : public ::testing::Test {
 protected:
  // An FM-enabled node whose inventory also has two mdevs on one of its GPUs.
  void SetUp() override {
    d.Boot(node);
    ObserveInventory inventory = gfp::testing::InventoryOf(node, d.now);
    inventory.devices.push_back(Mdev(kMdev1, "0000:c3:00.0", 1));
    inventory.devices.push_back(Mdev(kMdev2, "0000:c3:00.0", 1));
    EXPECT_EQ(d.Run(inventory).refusal, "");
  }
  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

TEST_F(MdevTest, KindAndParentAreAppliedAndPassthroughIsTheDefault) {
  const DeviceState& mdev = d.state.devices.at(kMdev1);
  EXPECT_EQ(mdev.kind, DeviceKind::kMdev);
  EXPECT_EQ(mdev.parent_bdf, "0000:c3:00.0");
  EXPECT_EQ(mdev.numa_node, 1);
  // A Device without a kind (every journal written before kinds existed) is passthrough.
  EXPECT_EQ(d.state.devices.at("0000:c3:00.0").kind, DeviceKind::kPciPassthrough);
  EXPECT_EQ(d.state.devices.at("0000:c3:00.0").parent_bdf, "");
}

TEST_F(MdevTest, SnapshotKeepsKindAndParent) {
  auto decoded = DecodeSnapshot(EncodeSnapshot(d.state));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded.value().devices.at(kMdev1).kind, DeviceKind::kMdev);
  EXPECT_EQ(decoded.value().devices.at(kMdev1).parent_bdf, "0000:c3:00.0");
  EXPECT_EQ(decoded.value(), d.state);
}

TEST_F(MdevTest, MdevRequestIsGrantedWithoutFabricManager) {
  const std::size_t mark = d.journal.size();
  Decision decision = d.Run(d.Request(kMdevResource, {kMdev2, kMdev1}));
  EXPECT_EQ(decision.refusal, "");
  EXPECT_TRUE(decision.effects.empty());  // no partition activation
  EXPECT_THAT(d.TypesSince(mark), ElementsAre("AllocationRequested", "AllocationGranted"));
  EXPECT_FALSE(d.state.allocations.at(decision.allocation_id).partition.has_value());
  EXPECT_TRUE(d.state.active.empty());
}

TEST_F(MdevTest, MdevRequestIsGrantedEvenWhileFabricManagerIsDown) {
  ObserveFabricManagerConnection down;
  down.now = d.now;
  down.connected = false;
  down.reason = "connection lost";
  d.Run(down);
  EXPECT_EQ(d.RunToCompletion(d.Request(kMdevResource, {kMdev1})), "");
  // A passthrough GPU still needs Fabric Manager.
  EXPECT_THAT(d.RunToCompletion(d.Request(node.resource, {"0000:c3:00.0"})),
              HasSubstr("Fabric Manager is not connected"));
}

TEST_F(MdevTest, PreferredAllocationOfMdevsIgnoresPartitions) {
  PreferredRequest request;
  request.available = {kMdev2, kMdev1};
  request.size = 1;
  auto preferred = PreferredAllocation(d.state, request);
  ASSERT_TRUE(preferred.ok()) << preferred.status().message();
  EXPECT_EQ(preferred.value().size(), 1u);
}

}  // namespace
}  // namespace gfp::sm
