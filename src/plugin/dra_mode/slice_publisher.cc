#include "plugin/dra_mode/slice_publisher.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "adapters/host/pcie_root.h"
#include "common/text_escape.h"
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
  std::optional<std::vector<Json>> seen = observed;
  for (int pass = 0;; ++pass) {
    if (!seen) {
      GFP_ASSIGN_OR_RETURN(SliceList listed, api_.ListSlices(settings_.node, settings_.driver));
      seen = std::move(listed.items);
    }
    PublishResult result;
    std::vector<Json> ours = Ours(*seen, result);
    GFP_ASSIGN_OR_RETURN(result, Write(ours, DesiredDevices(), result));
    if (!result.relist || pass > 0) return result;
    seen.reset();  // a stale slice changed under us: see it as it is now, once
  }
}

bool IsOurSlice(const Json& slice, const DraSettings& settings) {
  return dra::StringAt(slice, {"spec", "nodeName"}) == settings.node &&
         dra::StringAt(slice, {"spec", "driver"}) == settings.driver &&
         dra::StringAt(slice, {"spec", "pool", "name"}) == settings.node;
}

std::vector<Json> SlicePublisher::Ours(const std::vector<Json>& seen, PublishResult& result) {
  std::vector<Json> ours;
  for (const Json& slice : seen) {
    if (IsOurSlice(slice, settings_)) {
      ours.push_back(slice);
      continue;
    }
    ++result.foreign;
    const std::string node = dra::StringAt(slice, {"spec", "nodeName"});
    const std::string driver = dra::StringAt(slice, {"spec", "driver"});
    const std::string pool = dra::StringAt(slice, {"spec", "pool", "name"});
    if (foreign_logged_.insert(NameOf(slice)).second) {
      spdlog::warn(
          "ResourceSlice {} (driver {}, node {}, pool {}) is not ours, yet the API server "
          "returned it: left alone (does the API server ignore fieldSelector?)",
          EscapeAndTruncate(NameOf(slice), 253), EscapeAndTruncate(driver, 63),
          EscapeAndTruncate(node, 253), EscapeAndTruncate(pool, 253));
    }
  }
  return ours;
}

bool SlicePublisher::MayRewrite(bool needed, const std::string& sha, const std::string& name,
                                PublishResult& result) {
  const sm::Micros now = core_.Now();
  if (!needed || written_sha_.empty() || sha != written_sha_) {
    // Nothing to take back, or our own devices changed: that is written at once.
    if (!needed && rewrites_.Quiet(now)) {
      spdlog::info("ResourceSlice {} is no longer rewritten by another writer", name);
    }
    return true;
  }
  const RewriteBackoff::Decision decision = rewrites_.Interfered(now);
  result.retry_after = decision.retry_after;
  if (decision.episode_started) {
    spdlog::warn(
        "ResourceSlice {} is being rewritten by another writer (another plugin instance with "
        "--node-name {}?): rewriting it back at most every {} ms, growing to {} s",
        name, settings_.node, decision.retry_after.count(),
        RewriteBackoff::kMaxHold.count() / 1000);
  }
  return decision.write;
}

Status SlicePublisher::DeleteStale(const std::vector<Json>& ours, const Json* keep,
                                   PublishResult& result) {
  for (const Json& slice : ours) {
    if (&slice == keep) continue;
    const Status deleted =
        api_.DeleteSlice(NameOf(slice), dra::StringAt(slice, {"metadata", "uid"}),
                         dra::StringAt(slice, {"metadata", "resourceVersion"}));
    if (deleted.code() == ErrorCode::kAlreadyExists) {
      spdlog::info("stale ResourceSlice {} changed since it was seen: not deleted, relisting",
                   NameOf(slice));
      result.relist = true;
      continue;
    }
    GFP_RETURN_IF_ERROR(deleted);
    spdlog::info("deleted stale ResourceSlice {}", NameOf(slice));
    ++result.deleted;
  }
  return Status::Ok();
}

Result<PublishResult> SlicePublisher::Write(const std::vector<Json>& ours, const Json& devices,
                                            PublishResult result) {
  const sm::ResourceSliceState journaled =
      core_.engine().Read([](const sm::State& s) { return s.resource_slice; });
  // Keep the slice the journal names, else the newest; every other one of ours is stale.
  const Json* keep = nullptr;
  std::int64_t highest = std::max(journaled.generation, written_generation_);
  for (const Json& slice : ours) {
    highest = std::max(highest, GenerationOf(slice));
    if (!keep || NameOf(slice) == journaled.name ||
        (NameOf(*keep) != journaled.name && GenerationOf(slice) > GenerationOf(*keep))) {
      keep = &slice;
    }
  }
  const std::string sha = dra::DevicesSha256(devices);
  const bool up_to_date = keep && UpToDate(*keep, sha, settings_);
  const bool needed = !up_to_date || ours.size() > 1;
  if (!MayRewrite(needed, sha, keep ? NameOf(*keep) : journaled.name, result)) {
    result.generation = keep ? GenerationOf(*keep) : 0;
    return result;  // held: another writer's turn lasts until the hold is over
  }
  GFP_RETURN_IF_ERROR(DeleteStale(ours, keep, result));
  Json written;
  if (up_to_date) {
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
    written_generation_ = std::max(written_generation_, GenerationOf(written));
  }
  written_sha_ = sha;  // the slice now says our devices, by our hand or as found
  result.generation = GenerationOf(written);
  const sm::ResourceSliceState published{NameOf(written), result.generation,
                                         static_cast<std::uint32_t>(devices.size()), sha};
  GFP_RETURN_IF_ERROR(Journal(published, journaled));
  if (result.written) {
    spdlog::info("published ResourceSlice {} generation {} with {} GPUs", published.name,
                 published.generation, published.device_count);
  }
  return result;
}

Status SlicePublisher::Journal(const sm::ResourceSliceState& published,
                               const sm::ResourceSliceState& journaled) {
  if (published == journaled) return Status::Ok();
  const sm::Micros now = core_.Now();
  const bool same_devices = published.name == journaled.name &&
                            published.device_count == journaled.device_count &&
                            published.devices_sha256 == journaled.devices_sha256;
  // Only the generation moved (we took our slice back): a war of writers must not flood it.
  if (same_devices && journaled_at_ && now - *journaled_at_ < kGenerationOnlyJournalEvery) {
    return Status::Ok();
  }
  GFP_RETURN_IF_ERROR(core_.Exclusive([&](core::SagaRunner&, core::FabricSync&) {
    return core_.engine().Execute(sm::RecordResourceSlicePublished{now, published}).status();
  }));
  journaled_at_ = now;
  return Status::Ok();
}

}  // namespace gfp::plugin::dra_mode
