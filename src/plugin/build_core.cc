#include "plugin/build_core.h"

#include <spdlog/spdlog.h>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/host/pci_ids.h"
#include "adapters/mapping/module_mapping.h"
#include "common/text_escape.h"
#include "plugin/core/fm_library_port.h"
#include "plugin/core/node_inventory.h"
#include "statemachine/claims.h"

namespace gfp::plugin {
namespace {

Result<adapters::host::PciIds> LoadNames(const ServeConfig& config) {
  if (!config.pci_ids.empty()) return adapters::host::LoadPciIds(config.pci_ids);
  auto found = adapters::host::FindPciIdsFile();
  if (!found.ok()) {
    spdlog::warn("{}; resources are named by raw device id", found.status().message());
    return adapters::host::PciIds();
  }
  return adapters::host::LoadPciIds(*found);
}

Result<std::unique_ptr<engine::Engine>> OpenJournal(const ServeConfig& config,
                                                    const engine::EngineOptions& options) {
  GFP_ASSIGN_OR_RETURN(auto engine, engine::Engine::Open(config.journal, options));
  const auto& recovery = engine->recovery();
  if (!recovery.journal_note.empty()) spdlog::warn("{}", recovery.journal_note);
  spdlog::info("journal {} recovered in {:.1f} ms (snapshot at seq {}, {} events replayed)",
               config.journal.string(), recovery.milliseconds, recovery.snapshot_seq,
               recovery.events_replayed);
  for (const auto& skipped : recovery.skipped_snapshots) spdlog::warn("{}", skipped);
  if (recovery.events_indexed > 0) {
    spdlog::info("journal {}: indexed {} events written before schema 2 in {:.1f} ms",
                 config.journal.string(), recovery.events_indexed, recovery.index_milliseconds);
  }
  if (!recovery.index_error.empty()) {
    spdlog::warn("{} (journal history scans the events not indexed; the next start tries again)",
                 recovery.index_error);
  }
  return engine;
}

Result<std::unique_ptr<core::FabricPort>> MakeFabricPort(const ServeConfig& config,
                                                         const CoreOverrides& overrides) {
  if (overrides.fabric) return overrides.fabric(config);
  adapters::fm::FabricManagerConfig fm_config;
  fm_config.library_path = config.fm_library;
  fm_config.address = config.fm_address;
  fm_config.call_deadline = config.fm_call_deadline;
  if (overrides.fm_reconnect_backoff_initial) {
    fm_config.reconnect_backoff_initial = *overrides.fm_reconnect_backoff_initial;
  }
  if (overrides.fm_reconnect_backoff_max) {
    fm_config.reconnect_backoff_max = *overrides.fm_reconnect_backoff_max;
  }
  GFP_ASSIGN_OR_RETURN(auto client, adapters::fm::FabricManagerClient::Create(fm_config));
  return std::unique_ptr<core::FabricPort>(
      std::make_unique<core::FmLibraryPort>(std::move(client)));
}

// SPEC §11, one mode per node: a start in one mode is refused while the journal holds live
// allocations of the other (kubelet allocations in DRA mode, claims in device-plugin mode, or a
// claim still being unprepared), naming them.
Status CheckOneModePerNode(const engine::Engine& engine, bool dra_mode) {
  const std::string others = engine.Read([&](const sm::State& s) {
    std::string text;
    int count = 0;
    auto add = [&](const std::string& item) {
      if (++count <= 8) text += (text.empty() ? "" : ", ") + item;
    };
    for (const auto& [id, a] : s.allocations) {
      const bool live = a.status == sm::AllocationStatus::kRequested ||
                        a.status == sm::AllocationStatus::kGranted ||
                        a.status == sm::AllocationStatus::kBound;
      if (!live || a.claim.has_value() == dra_mode) continue;
      add(a.claim ? "claim " + sm::ClaimText(*a.claim) : id + " (" + a.resource + ")");
    }
    if (!dra_mode) {
      for (const auto& [uid, c] : s.unpreparing_claims) add("claim " + sm::ClaimText(c.claim));
    }
    if (count > 8) text += " and " + std::to_string(count - 8) + " more";
    return text;
  });
  if (others.empty()) return Status::Ok();
  return FailedPrecondition(
      std::string("a node runs one mode (SPEC §11), and the journal still holds live ") +
      (dra_mode ? "device-plugin allocations " : "DRA claims ") + EscapeControl(others) +
      (dra_mode ? "; stop their VMs and let the release grace free them in device-plugin mode "
                  "before starting with --mode=dra"
                : "; delete their VMs and let kubelet unprepare them in DRA mode before starting "
                  "in device-plugin mode"));
}

}  // namespace

Result<std::unique_ptr<core::PluginCore>> BuildCore(const ServeConfig& config,
                                                    const std::string& version, core::Clock clock,
                                                    const CoreOverrides& overrides) {
  GFP_ASSIGN_OR_RETURN(auto engine, OpenJournal(config, overrides.engine));
  GFP_RETURN_IF_ERROR(CheckOneModePerNode(*engine, config.dra_mode));
  GFP_ASSIGN_OR_RETURN(adapters::host::PciIds names, LoadNames(config));
  GFP_ASSIGN_OR_RETURN(core::NodeInventory inventory,
                       core::ScanNode(config.sysfs_root, config.dev_root, names));
  if (inventory.resources.empty()) {
    spdlog::warn(
        "no NVIDIA device to serve under {} (no GPU on a VFIO driver, no vGPU VF, no mdev)",
        config.sysfs_root.string());
  }

  std::optional<adapters::mapping::ModuleMapping> mapping;
  std::unique_ptr<core::FabricPort> fabric;
  if (config.fabric_manager) {
    GFP_RETURN_IF_ERROR(core::CheckOneFabricMode(inventory));
    GFP_ASSIGN_OR_RETURN(auto checked, adapters::mapping::LoadModuleMappingFor(
                                           config.pci_module_mapping, inventory.FabricGpuBdfs()));
    for (const auto& warning : checked.warnings) spdlog::warn("{}", warning);
    mapping = std::move(checked.mapping);
    GFP_ASSIGN_OR_RETURN(fabric, MakeFabricPort(config, overrides));
  }
  auto core =
      std::make_unique<core::PluginCore>(config, std::move(engine), std::move(inventory),
                                         std::move(mapping), std::move(fabric), std::move(clock));
  GFP_RETURN_IF_ERROR(core->Start(version));
  return core;
}

}  // namespace gfp::plugin
