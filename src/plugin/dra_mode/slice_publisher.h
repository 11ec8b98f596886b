// Keeps this node's one ResourceSlice in the API server equal to the facts (SPEC §11 "Devices"):
// creates it (owned by the Node), updates it with generation + 1 when the facts change (partition
// table, degradation, health, inventory) or someone else changed it, recreates it after kubelet
// wiped it, deletes stale extra slices of ours (only the object listed: a uid precondition), and
// journals each publication (ResourceSlicePublished) after the API server accepted it.
// "Ours" is checked here, not trusted to the server's field selector: a slice of another driver,
// node or pool is never deleted or updated. Another writer that keeps rewriting our slice is
// noticed (a warning) and answered with growing holds between rewrites (RewriteBackoff), and a
// publication that differs from the journaled one only in its generation is journaled at most
// once per kGenerationOnlyJournalEvery. Single-threaded: one thread calls it.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plugin/core/plugin_core.h"
#include "plugin/dra/resource_slice.h"
#include "plugin/dra_mode/dra_settings.h"
#include "plugin/dra_mode/kube_api.h"
#include "plugin/dra_mode/rewrite_backoff.h"

namespace gfp::plugin::dra_mode {

// What the slice says of each GPU that the state does not know: its PCIe root (sysfs) and
// product name (the inventory's pci.ids name).
std::map<std::string, dra::HostGpuFacts> SliceHostFacts(const core::NodeInventory& inventory,
                                                        const std::filesystem::path& sysfs_root);

// Whether `slice` is this node's, of this driver, in this node's pool (the pool is named after
// the node): the only slices the plugin reads as its own or ever writes.
bool IsOurSlice(const nlohmann::json& slice, const DraSettings& settings);

// What one pass did, for logs, metrics and tests.
struct PublishResult {
  bool written = false;  // created or updated the slice
  std::int64_t generation = 0;
  std::size_t deleted = 0;  // stale extra slices of ours removed
  std::size_t foreign = 0;  // slices seen that are not ours (left alone)
  // A stale slice changed since it was seen (its delete's precondition failed) and is left:
  // the next pass should list afresh (Publish already relisted once).
  bool relist = false;
  // Another writer keeps rewriting our slice: the next pass is of no use before this long
  // (0: whenever due). Passes before it write nothing unless our devices change.
  std::chrono::milliseconds retry_after{0};
};

// A publication that only moved the generation (our rewrite of someone else's edit) is
// journaled at most this often; one whose name or devices changed always is.
inline constexpr sm::Micros kGenerationOnlyJournalEvery = 60'000'000;

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
  const DraSettings& settings() const { return settings_; }

 private:
  // The slices of `seen` that are ours (node, driver, pool); the others are counted and
  // logged once per name.
  std::vector<nlohmann::json> Ours(const std::vector<nlohmann::json>& seen, PublishResult& result);
  Result<PublishResult> Write(const std::vector<nlohmann::json>& ours,
                              const nlohmann::json& devices, PublishResult result);
  // Whether a pass that must write may (RewriteBackoff), filling result.retry_after.
  bool MayRewrite(bool needed, const std::string& sha, const std::string& name,
                  PublishResult& result);
  Status DeleteStale(const std::vector<nlohmann::json>& ours, const nlohmann::json* keep,
                     PublishResult& result);
  Status Journal(const sm::ResourceSliceState& published, const sm::ResourceSliceState& journaled);

  core::PluginCore& core_;
  KubeApi& api_;
  const DraSettings settings_;
  const std::map<std::string, dra::HostGpuFacts> host_;
  std::string node_uid_;                  // fetched once: the owner reference
  std::set<std::string> foreign_logged_;  // names of foreign slices already warned about
  std::string written_sha_;               // our devices as we last wrote them ("": not yet)
  std::int64_t written_generation_ = 0;   // the highest generation we wrote
  std::optional<sm::Micros> journaled_at_;
  RewriteBackoff rewrites_;
};

}  // namespace gfp::plugin::dra_mode
