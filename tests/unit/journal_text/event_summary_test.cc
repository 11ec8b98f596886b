// SummarizeEvent's exact text for every event type and every optional part: `journal history`
// prints it and operators read it, so a change of wording must be a decision, not an accident.
#include "journal_text/event_summary.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gfp::sm {
namespace {

struct Case {
  const char* event;  // an events.Event in protobuf text format
  const char* summary;
};

events::Event Parse(const std::string& text) {
  events::Event event;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &event)) << text;
  return event;
}

void ExpectSummaries(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(journal_text::SummarizeEvent(Parse(c.event)), c.summary) << c.event;
  }
}

TEST(EventSummary, NodeEvents) {
  ExpectSummaries({
      {R"(plugin_started { version: "1.2.3" fabric_manager_enabled: true
                           release_grace_micros: 30000000 })",
       "plugin 1.2.3 started, Fabric Manager enabled, release grace 30000 ms"},
      {R"(plugin_started { version: "0.1" })",
       "plugin 0.1 started, Fabric Manager disabled, release grace 0 ms"},
      {R"(inventory_observed { })", "0 devices:"},
      {R"(inventory_observed {
            devices { bdf: "0000:1b:00.0" iommu_group: "42" numa_node: 1 resource: "nvidia.com/A" }
            devices { bdf: "0000:1c:00.0" iommu_group: "43" resource: "nvidia.com/A" }
            warnings: "0000:1d:00.0: no iommu_group" warnings: "w2" })",
       "2 devices: 0000:1b:00.0(group 42, numa 1) 0000:1c:00.0(group 43, numa 0) resource "
       "nvidia.com/A; warning: 0000:1d:00.0: no iommu_group; warning: w2"},
      {R"(inventory_observed {
            devices { bdf: "0000:1b:00.0" resource: "r" }
            devices { bdf: "0000:1b:00.4" kind: DEVICE_KIND_VGPU_VF resource: "r" }
            devices { bdf: "0000:1b:00.5" kind: DEVICE_KIND_VGPU_VF resource: "r" } })",
       "3 devices (1 passthrough, 2 vgpu-vf): 0000:1b:00.0(group , numa 0) 0000:1b:00.4(group , "
       "numa 0) 0000:1b:00.5(group , numa 0) resource r"},
      {R"(inventory_observed { devices { bdf: "u-1" kind: DEVICE_KIND_MDEV resource: "m" } })",
       "1 devices (1 mdev): u-1(group , numa 0) resource m"},
      {R"(module_mapping_loaded { path: "/etc/map.yaml"
            assignments { bdf: "0000:1b:00.0" module_id: 1 }
            assignments { bdf: "0000:1c:00.0" module_id: 2 } })",
       "/etc/map.yaml: 0000:1b:00.0=1 0000:1c:00.0=2"},
      {R"(device_health_changed { bdf: "0000:1b:00.0" healthy: true })", "0000:1b:00.0 Healthy"},
      {R"(device_health_changed { bdf: "0000:1b:00.0" reason: "gone" })",
       "0000:1b:00.0 Unhealthy: gone"},
      {R"(kubelet_restart_observed { reason: "socket recreated" })",
       "kubelet restarted: socket recreated"},
      {"", "(no body)"},
  });
}

TEST(EventSummary, FabricManagerEvents) {
  ExpectSummaries({
      {R"(fabric_manager_connected { address: "127.0.0.1" connect_params_version: 2 })",
       "connected to 127.0.0.1 (connect params v2)"},
      {R"(fabric_manager_disconnected { reason: "timeout" })", "disconnected: timeout"},
      {R"(fabric_manager_disconnected { reason: "lost"
            fm { code: -3 name: "FM_ST_TIMEOUT" message: "no answer" } })",
       "disconnected: lost FM_ST_TIMEOUT (no answer)"},
      {R"(fabric_manager_disconnected { reason: "lost" fm { code: -7 } })",
       "disconnected: lost code -7"},
      {R"(partition_table_observed { })", "0 partitions:"},
      {R"(partition_table_observed {
            partitions { id: 0 physical_ids: [1, 2] nvlinks_available: 12 max_nvlinks: 12
                         active: true }
            partitions { id: 1 physical_ids: [3] nvlinks_available: 6 max_nvlinks: 12 }
            partitions { id: 2 physical_ids: [4] unsupported: true } })",
       "3 partitions: 0[1,2]* 1[3](degraded) 2[4](degraded)"},
      {R"(drift_detected { partition_id: 4 kind: KIND_ACTIVE_IN_FM_ONLY detail: "adopted" })",
       "partition 4: adopted"},
      {R"(fabric_manager_resynced { partition_ids: [1, 5] fm { name: "FM_ST_SUCCESS" } })",
       "active set [1,5] handed to Fabric Manager: FM_ST_SUCCESS"},
      {R"(fabric_manager_resynced { fm { code: 0 } })",
       "active set [] handed to Fabric Manager: code 0"},
  });
}

TEST(EventSummary, AllocationEvents) {
  ExpectSummaries({
      {R"(allocation_requested { allocation_id: "alloc-1" resource: "nvidia.com/A"
            device_ids: ["0000:1b:00.0", "0000:1c:00.0"] container_index: 1 })",
       "alloc-1 nvidia.com/A [0000:1b:00.0,0000:1c:00.0] container 1"},
      {R"(allocation_requested { allocation_id: "alloc-2" resource: "r" device_ids: "a"
            device_ids_omitted: 7 })",
       "alloc-2 r [a … and 7 more IDs] container 0"},
      {R"(allocation_granted { allocation_id: "alloc-1" })", "alloc-1 granted"},
      {R"(allocation_granted { allocation_id: "alloc-1" has_partition: true partition_id: 0 })",
       "alloc-1 granted partition 0"},
      {R"(allocation_rejected { allocation_id: "alloc-3" reason: "no partition"
            fm { code: 1 } })",
       "alloc-3 rejected: no partition"},
      {R"(allocation_bound { allocation_id: "alloc-1" pod_namespace: "vms" pod_name: "vm-a"
            container_name: "compute" })",
       "alloc-1 bound to vms/vm-a container compute"},
      {R"(allocation_released { allocation_id: "alloc-1" reason: REASON_DEVICES_UNUSED })",
       "alloc-1 released (REASON_DEVICES_UNUSED)"},
      {R"(allocation_released { allocation_id: "alloc-1" reason: REASON_SUPERSEDED
            detail: "by alloc-2" })",
       "alloc-1 released (REASON_SUPERSEDED): by alloc-2"},
  });
}

TEST(EventSummary, PartitionEvents) {
  ExpectSummaries({
      {R"(partition_activation_requested { partition_id: 3 allocation_id: "alloc-1" })",
       "partition 3 activation requested for alloc-1"},
      {R"(partition_activation_requested { partition_id: 3 allocation_id: "alloc-1"
            reason: "recovery" vf_bdfs: ["0000:1b:00.4", "0000:1c:00.4"] })",
       "partition 3 activation requested for alloc-1 (recovery) vfs=[0000:1b:00.4,0000:1c:00.4]"},
      {R"(partition_activated { partition_id: 3 allocation_id: "alloc-1" })",
       "partition 3 active for alloc-1"},
      {R"(partition_activated { partition_id: 3 allocation_id: "alloc-1" vf_bdfs: "v" })",
       "partition 3 active for alloc-1 vfs=[v]"},
      {R"(partition_activation_failed { partition_id: 3
            fm { code: -5 name: "FM_ST_IN_USE" message: "busy" } })",
       "partition 3 activation failed: FM_ST_IN_USE (busy)"},
      {R"(partition_deactivation_requested { partition_id: 2 reason: "stale" })",
       "partition 2 deactivation requested: stale"},
      {R"(partition_deactivated { partition_id: 2 })", "partition 2 inactive"},
      {R"(partition_deactivated { partition_id: 2 was_already_inactive: true })",
       "partition 2 inactive (was already inactive)"},
      {R"(partition_deactivation_failed { partition_id: 2 fm { code: -1 } })",
       "partition 2 deactivation failed: code -1"},
  });
}

TEST(EventSummary, ClaimEvents) {
  ExpectSummaries({
      {R"(claim_prepare_requested { allocation_id: "alloc-4"
            claim { uid: "u-1" namespace: "vms" name: "vm-a-gpus" }
            devices: [{ request: "gpu0" bdf: "0000:1b:00.0" }, { request: "gpu1" bdf: "0000:43:00.0" }]
            reserved_for: "vms/virt-launcher-vm-a" has_partition: true partition_id: 9 })",
       "alloc-4 claim vms/vm-a-gpus (uid u-1) prepare requested "
       "[gpu0=0000:1b:00.0,gpu1=0000:43:00.0] partition 9 for vms/virt-launcher-vm-a"},
      {R"(claim_prepare_requested { allocation_id: "alloc-4" repair: true
            repair_reason: "partition 9 is not active for it"
            claim { uid: "u-1" namespace: "vms" name: "c" } devices: { request: "g" bdf: "b" }
            devices_omitted: 3 })",
       "alloc-4 claim vms/c (uid u-1) repair requested: partition 9 is not active for it "
       "[g=b … and 3 more devices]"},
      {R"(claim_prepared { allocation_id: "alloc-4" claim_uid: "u-1" })",
       "alloc-4 claim uid u-1 prepared"},
      {R"(claim_prepare_failed { allocation_id: "alloc-5" claim_uid: "u-2" reason: "busy" })",
       "alloc-5 claim uid u-2 failed: busy"},
      {R"(claim_unprepare_requested { allocation_id: "alloc-4" claim_uid: "u-1"
            reason: REASON_CLAIM_GONE detail: "404" })",
       "alloc-4 claim uid u-1 unprepare requested (REASON_CLAIM_GONE): 404"},
      {R"(claim_unprepared { allocation_id: "alloc-4" claim_uid: "u-1" })",
       "alloc-4 claim uid u-1 unprepared"},
      {R"(resource_slice_published { slice_name: "node-a-gpu-fabric-plugin.io-x7k2p"
            generation: 3 device_count: 8 devices_sha256: "ab12" })",
       "slice node-a-gpu-fabric-plugin.io-x7k2p generation 3: 8 devices, sha256 ab12"},
  });
}

}  // namespace
}  // namespace gfp::sm
