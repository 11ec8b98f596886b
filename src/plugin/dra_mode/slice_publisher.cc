#include "plugin/dra_mode/slice_publisher.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "adapters/host/pcie_root.h"
#include "plugin/dra/json_fields.h"

namespace gfp::plugin::dra_mode {
namespace {

using Json = nlohmann::json;

std::string NameOf(const Json& slice) { return dra::StringAt(slice, {"metadata", "name"}); }

std::int64_t GenerationOf(const Json& slice) {
  return dra::IntAt(slice, {"spec", "pool", "generation"});
}

// Whether the slice is exactly ours as published: its devices (canonical, as ours are), and a
// pool of this node that says one slice.
bool UpToDate(const Json& slice, const std::string& devices_sha, const DraSettings& settings) {
  const Json* devices = dra::FieldAt(slice, {"spec", "devices"});
  return devices && dra::DevicesSha256(*devices) == devices_sha &&
         dra::StringAt(slice, {"spec", "nodeName"}) == settings.node &&
         dra::StringAt(slice, {"spec", "driver"}) == settings.driver &&
         dra::StringAt(slice, {"spec", "pool", "name"}) == settings.node &&
         dra::IntAt(slice, {"spec", "pool", "resourceSliceCount"}) == 1;
}

}  // namespace

std::map<std::string, dra::HostGpuFacts> SliceHostFacts(const core::NodeInventory& inventory,
                                                        const std::filesystem::path& sysfs_root) {
  std::map<std::string, dra::HostGpuFacts> out;
  for (const auto& resource : inventory.resources) {
    if (resource.kind != sm::DeviceKind::kPciPassthrough) continue;
    for (const auto& device : resource.devices) {
      dra::HostGpuFacts facts;
      facts.product_name = resource.naming.suffix;
      auto root = adapters::host::PcieRootOf(sysfs_root, device.id);
      if (root.ok()) {
        facts.pcie_root = *root;
      } else {
        spdlog::warn("the slice leaves out pcieRoot of GPU {}: {}", device.id,
                     root.status().message());
      }
      out.emplace(device.id, std::move(facts));
    }
  }
  return out;
}

SlicePublisher::SlicePublisher(core::PluginCore& core, KubeApi& api, DraSettings settings,
                               std::map<std::string, dra::HostGpuFacts> host)
    : core_(core), api_(api), settings_(std::move(settings)), host_(std::move(host)) {}

Json SlicePublisher::DesiredDevices() const {
  return core_.engine().Read(
      [&](const sm::State& s) { return dra::DevicesJson(dra::SliceGpus(s, host_)); });
}

Result<PublishResult> SlicePublisher::Publish(const std::optional<std::vector<Json>>& observed) {
  if (node_uid_.empty()) {
    GFP_ASSIGN_OR_RETURN(node_uid_, api_.GetNodeUid(settings_.node));
  }
  std::vector<Json> ours;
  if (observed) {
    ours = *observed;
  } else {
    GFP_ASSIGN_OR_RETURN(SliceList listed, api_.ListSlices(settings_.node, settings_.driver));
    ours = std::move(listed.items);
  }
  return Write(ours, DesiredDevices());
}

Result<PublishResult> SlicePublisher::Write(const std::vector<Json>& ours, const Json& devices) {
  const sm::ResourceSliceState journaled =
      core_.engine().Read([](const sm::State& s) { return s.resource_slice; });
  // Keep the slice the journal names, else the newest; every other one of ours is stale.
  const Json* keep = nullptr;
  std::int64_t highest = journaled.generation;
  for (const Json& slice : ours) {
    highest = std::max(highest, GenerationOf(slice));
    if (!keep || NameOf(slice) == journaled.name ||
        (NameOf(*keep) != journaled.name && GenerationOf(slice) > GenerationOf(*keep))) {
      keep = &slice;
    }
  }
  PublishResult result;
  for (const Json& slice : ours) {
    if (&slice == keep) continue;
    GFP_RETURN_IF_ERROR(api_.DeleteSlice(NameOf(slice)));
    spdlog::info("deleted stale ResourceSlice {}", NameOf(slice));
    ++result.deleted;
  }
  const std::string sha = dra::DevicesSha256(devices);
  Json written;
  if (keep && UpToDate(*keep, sha, settings_)) {
    written = *keep;
  } else {
    Json slice =
        dra::ResourceSliceJson({settings_.node, node_uid_, settings_.driver}, highest + 1, devices);
    if (keep) {
      slice["metadata"].erase("generateName");
      slice["metadata"]["name"] = NameOf(*keep);
      slice["metadata"]["resourceVersion"] = dra::StringAt(*keep, {"metadata", "resourceVersion"});
      GFP_ASSIGN_OR_RETURN(written, api_.UpdateSlice(slice));
    } else {
      GFP_ASSIGN_OR_RETURN(written, api_.CreateSlice(slice));
    }
    result.written = true;
  }
  result.generation = GenerationOf(written);
  sm::ResourceSliceState published{NameOf(written), result.generation,
                                   static_cast<std::uint32_t>(devices.size()), sha};
  if (published != journaled) {
    GFP_RETURN_IF_ERROR(core_.Exclusive([&](core::SagaRunner&, core::FabricSync&) {
      return core_.engine()
          .Execute(sm::RecordResourceSlicePublished{core_.Now(), published})
          .status();
    }));
  }
  if (result.written) {
    spdlog::info("published ResourceSlice {} generation {} with {} GPUs", published.name,
                 published.generation, published.device_count);
  }
  return result;
}

}  // namespace gfp::plugin::dra_mode
