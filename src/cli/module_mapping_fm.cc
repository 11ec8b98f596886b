#include "cli/module_mapping_fm.h"

#include <memory>
#include <set>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/host/bdf.h"
#include "common/text_escape.h"

namespace gfp::cli {
namespace {

// What FM reports for a GPU it does not give a PCI address for (fabric-manager.md §3.7).
bool IsEmptyBusId(const std::string& bus_id) {
  if (bus_id.empty()) return true;
  auto bdf = adapters::host::NormalizeBdf(bus_id);
  return bdf.ok() && *bdf == "0000:00:00.0";
}

struct BusIdTable {
  std::map<std::uint32_t, std::string> bdf_by_module;
  std::map<std::string, std::uint32_t> module_by_bdf;
  std::set<std::uint32_t> without_bus_id;
};

// Adds one GPU of `partition`; the same module must always be at the same address.
Status AddGpu(const adapters::fm::PartitionInfo& partition, std::uint32_t module_id,
              const std::string& bus_id, BusIdTable* table) {
  const std::string where = "Fabric Manager partition " + std::to_string(partition.id) +
                            ", module " + std::to_string(module_id);
  if (IsEmptyBusId(bus_id)) {
    table->without_bus_id.insert(module_id);
    return Status::Ok();
  }
  auto bdf = adapters::host::NormalizeBdf(bus_id);
  if (!bdf.ok()) {
    return InvalidArgument(where + ": pciBusId \"" + EscapeAndTruncate(bus_id, 64) +
                           "\" is not a PCI address");
  }
  if (auto [it, inserted] = table->bdf_by_module.emplace(module_id, *bdf);
      !inserted && it->second != *bdf) {
    return InvalidArgument(where + ": reported at " + *bdf + " here and at " + it->second +
                           " in another partition");
  }
  if (auto [it, inserted] = table->module_by_bdf.emplace(*bdf, module_id);
      !inserted && it->second != module_id) {
    return InvalidArgument(where + ": GPU " + *bdf + " is also reported as module " +
                           std::to_string(it->second));
  }
  return Status::Ok();
}

}  // namespace

std::string JoinIds(const std::vector<std::uint32_t>& ids) {
  std::string out;
  for (std::uint32_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

Result<std::vector<adapters::fm::PartitionInfo>> ReadFmPartitions(const FmFlags& flags) {
  adapters::fm::FabricManagerConfig config;
  config.address = flags.address;
  config.library_path = flags.library;
  auto client = adapters::fm::FabricManagerClient::Create(config);
  if (!client.ok()) return client.status().WithContext("cannot use Fabric Manager");
  if (adapters::fm::FmStatus connected = (*client)->Connect(); !connected.ok()) {
    return connected.status().WithContext("cannot connect to Fabric Manager at " +
                                          EscapeControl(flags.address));
  }
  auto partitions = (*client)->GetSupportedPartitions();
  if (!partitions.ok()) {
    return partitions.status().WithContext("cannot read Fabric Manager's partition table");
  }
  return std::move(*partitions);
}

Result<std::map<std::string, std::uint32_t>> MappingFromFmPartitions(
    const std::vector<adapters::fm::PartitionInfo>& partitions) {
  BusIdTable table;
  for (const adapters::fm::PartitionInfo& partition : partitions) {
    for (std::size_t g = 0; g < partition.physical_ids.size(); ++g) {
      const std::string bus_id = g < partition.pci_bus_ids.size() ? partition.pci_bus_ids[g] : "";
      GFP_RETURN_IF_ERROR(AddGpu(partition, partition.physical_ids[g], bus_id, &table));
    }
  }
  if (table.bdf_by_module.empty() && table.without_bus_id.empty()) {
    return FailedPrecondition("Fabric Manager reports no supported partitions, so no GPUs");
  }
  if (!table.without_bus_id.empty()) {
    const std::vector<std::uint32_t> ids(table.without_bus_id.begin(), table.without_bus_id.end());
    return FailedPrecondition(
        "Fabric Manager reports no PCI bus id for module" +
        std::string(ids.size() > 1 ? "s " : " ") + JoinIds(ids) +
        " (H100 and later systems leave pciBusId empty); generate the file with "
        "--from-nvidia-smi instead (docs/module-mapping.md)");
  }
  return table.module_by_bdf;
}

}  // namespace gfp::cli
