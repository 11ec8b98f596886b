// `journal state --format json` is walked from the snapshot message: every field of State shows,
// and the keys SPEC §2.2 and docs/journal-format.md promise keep their names and shapes.
#include "cli/state_json.h"

#include <gtest/gtest.h>

#include "common/state_fields.h"

namespace gfp::cli {
namespace {

using gfp::testing::FieldChanges;
using gfp::testing::StateWithEveryPart;

TEST(StateJson, EveryRowOfTheRenamingTableNamesASnapshotField) {
  EXPECT_EQ(StateJsonRowsWithoutField(), std::vector<std::string>{});
}

TEST(StateJson, EveryFieldOfTheStateShows) {
  const sm::State base = StateWithEveryPart();
  const nlohmann::json before = StateJson(base);
  for (const auto& c : FieldChanges()) {
    if (!c.in_snapshot) continue;  // bdf_of_module: shown as module_of_bdf ("modules")
    sm::State changed = base;
    c.change(changed);
    EXPECT_NE(StateJson(changed), before) << c.field << " does not show in the JSON";
  }
}

TEST(StateJson, KeepsTheKeysItPromises) {
  const nlohmann::json json = StateJson(StateWithEveryPart());
  EXPECT_EQ(json["last_seq"], 12);
  EXPECT_EQ(json["time"], "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(json["fabric_manager_enabled"], true);
  EXPECT_EQ(json["fabric_manager_connected"], true);
  EXPECT_EQ(json["devices"], 1);
  EXPECT_EQ(json["partitions_known"], 1);
  EXPECT_EQ(json["anomalies"], 1);
  const nlohmann::json unhealthy = {{{"bdf", "0000:1b:00.4"}, {"reason", "gone"}}};
  EXPECT_EQ(json["unhealthy_devices"], unhealthy);

  const auto& device = json["device_list"][0];
  EXPECT_EQ(device["id"], "0000:1b:00.4");
  EXPECT_EQ(device["kind"], "vgpu-vf");
  EXPECT_EQ(device["resource"], "nvidia.com/V");
  EXPECT_EQ(device["healthy"], false);
  EXPECT_EQ(device["parent_bdf"], "0000:1b:00.0");

  const nlohmann::json vfs = {"0000:1b:00.4"};
  const auto& active = json["active_partitions"][0];
  EXPECT_EQ(active["partition_id"], 3);
  EXPECT_EQ(active["devices"], nlohmann::json({"0000:1b:00.0"}));
  EXPECT_EQ(active["allocation_id"], "alloc-1");
  EXPECT_EQ(active["pod"], "vms/virt-launcher-a");
  EXPECT_EQ(active["adopted"], false);
  EXPECT_EQ(active["since"], "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(active["vf_bdfs"], vfs);

  const auto& allocation = json["live_allocations"][0];
  EXPECT_EQ(allocation["allocation_id"], "alloc-1");
  EXPECT_EQ(allocation["status"], "bound");
  EXPECT_EQ(allocation["partition_id"], 3);
  EXPECT_EQ(allocation["pod"], "vms/virt-launcher-a");
  EXPECT_EQ(allocation["devices"], vfs);
  EXPECT_EQ(allocation["fabric_vfs"], vfs);
  EXPECT_FALSE(allocation.contains("has_partition"));

  const auto& intent = json["pending_intents"][0];
  EXPECT_EQ(intent["partition_id"], 4);
  EXPECT_EQ(intent["kind"], "deactivate");
  EXPECT_EQ(intent["allocation_id"], "alloc-1");
  EXPECT_EQ(intent["requested_seq"], 11);
  EXPECT_FALSE(json.contains("format_version"));
}

TEST(StateJson, OmitsEmptyVfListsAndParentsAndNullsWhatIsUnset) {
  sm::State s = StateWithEveryPart();
  s.devices.mutable_value()["0000:1b:00.4"].parent_bdf.clear();
  s.active[3].vf_bdfs.clear();
  s.intents[4].vf_bdfs.clear();
  s.allocations["alloc-1"].fabric_vfs.clear();
  s.allocations["alloc-1"].partition.reset();
  s.allocations["alloc-1"].pod_name.clear();
  s.last_time = 0;
  const nlohmann::json json = StateJson(s);
  EXPECT_FALSE(json["device_list"][0].contains("parent_bdf"));
  EXPECT_FALSE(json["active_partitions"][0].contains("vf_bdfs"));
  EXPECT_FALSE(json["pending_intents"][0].contains("vf_bdfs"));
  EXPECT_FALSE(json["live_allocations"][0].contains("fabric_vfs"));
  EXPECT_TRUE(json["live_allocations"][0]["partition_id"].is_null());
  EXPECT_TRUE(json["live_allocations"][0]["pod"].is_null());
  EXPECT_TRUE(json["active_partitions"][0]["pod"].is_null());
  EXPECT_TRUE(json["time"].is_null());
}

// SPEC §2.2: in DRA mode an active partition carries "claim" instead of "allocation_id", and
// "pod" is the first pod of the claim's status.reservedFor.
TEST(StateJson, AClaimsPartitionNamesTheClaimAndItsFirstPod) {
  sm::State s = StateWithEveryPart();  // alloc-2 is claim vms/vm-b-gpus, granted partition 5
  s.partitions.mutable_value()[5] = {5, {2}, 18, 18, false};
  s.active[5] = {"alloc-2", false, s.last_time, {}};
  const nlohmann::json json = StateJson(s);
  const nlohmann::json* claim_partition = nullptr;
  for (const auto& entry : json["active_partitions"]) {
    if (entry["partition_id"] == 5) claim_partition = &entry;
  }
  ASSERT_NE(claim_partition, nullptr);
  const nlohmann::json claim = {{"uid", "uid-2"}, {"namespace", "vms"}, {"name", "vm-b-gpus"}};
  EXPECT_EQ((*claim_partition)["claim"], claim);
  EXPECT_FALSE(claim_partition->contains("allocation_id"));
  EXPECT_EQ((*claim_partition)["pod"], "vms/vm-b");
  EXPECT_EQ(json["active_partitions"][0]["allocation_id"], "alloc-1");
  EXPECT_FALSE(json["active_partitions"][0].contains("claim"));

  const auto& allocations = json["live_allocations"];
  EXPECT_FALSE(allocations[0].contains("claim")) << "a kubelet allocation has no claim key";
  EXPECT_EQ(allocations[1]["claim"]["namespace"], "vms");
  EXPECT_EQ(allocations[1]["claim"]["prepared"], true);
  EXPECT_EQ(allocations[1]["pod"], "vms/vm-b");
  EXPECT_EQ(json["unpreparing_claims"][0]["partition_id"], 6);
  EXPECT_EQ(json["resource_slice"]["generation"], 2);
}

}  // namespace
}  // namespace gfp::cli
