// Keeps this node's one ResourceSlice in the API server equal to the facts (SPEC §11 "Devices"):
// creates it (owned by the Node), updates it with generation + 1 when the facts change (partition
// table, degradation, health, inventory) or someone else changed it, recreates it after kubelet
// wiped it, deletes stale extra slices of ours, and journals each publication
// (ResourceSlicePublished) after the API server accepted it.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plugin/core/plugin_core.h"
#include "plugin/dra/resource_slice.h"
#include "plugin/dra_mode/dra_settings.h"
#include "plugin/dra_mode/kube_api.h"

namespace gfp::plugin::dra_mode {

// What the slice says of each GPU that the state does not know: its PCIe root (sysfs) and
// product name (the inventory's pci.ids name).
std::map<std::string, dra::HostGpuFacts> SliceHostFacts(const core::NodeInventory& inventory,
                                                        const std::filesystem::path& sysfs_root);

// What one pass did, for logs, metrics and tests.
struct PublishResult {
  bool written = false;  // created or updated the slice
  std::int64_t generation = 0;
  std::size_t deleted = 0;  // stale extra slices of ours removed
};

class SlicePublisher {
 public:
  SlicePublisher(core::PluginCore& core, KubeApi& api, DraSettings settings,
                 std::map<std::string, dra::HostGpuFacts> host);

  // One pass. `observed` is our slices as the watch last saw them; std::nullopt lists them
  // first. A 409 (someone changed it meanwhile) fails with kAlreadyExists: pass again after
  // a relist.
  Result<PublishResult> Publish(const std::optional<std::vector<nlohmann::json>>& observed);

  // The slice the facts give now: for tests and the demo.
  nlohmann::json DesiredDevices() const;

 private:
  Result<PublishResult> Write(const std::vector<nlohmann::json>& ours,
                              const nlohmann::json& devices);

  core::PluginCore& core_;
  KubeApi& api_;
  const DraSettings settings_;
  const std::map<std::string, dra::HostGpuFacts> host_;
  std::string node_uid_;  // fetched once: the owner reference
};

}  // namespace gfp::plugin::dra_mode
