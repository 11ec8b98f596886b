#include "sim/fm/sim_tables.h"

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "sim/fm/embedded_tables.h"

namespace gfp::fmsim {
namespace {

Result<SimTable> ParseTable(const EmbeddedTable& embedded) {
  nlohmann::json doc = nlohmann::json::parse(embedded.json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("partitions")) {
    return DataLoss("embedded partition table " + std::string(embedded.name) + " is malformed");
  }
  SimTable table;
  table.name = std::string(embedded.name);
  try {
    table.nvlink_line_rate_mbps = doc.value("nvlink_line_rate_mbps", 0U);
    for (const auto& entry : doc["partitions"]) {
      SimPartition partition;
      partition.id = entry.value("id", 0U);
      partition.physical_ids = entry.value("physical_ids", std::vector<std::uint32_t>{});
      partition.max_nvlinks = entry.value("max_nvlinks", 0U);
      partition.nvlinks_available = entry.value("nvlinks_available", 0U);
      table.partitions.push_back(std::move(partition));
    }
    if (doc.contains("pci_bus_ids")) {
      for (const auto& item : doc["pci_bus_ids"].items()) {
        const auto physical_id = static_cast<std::uint32_t>(std::stoul(item.key()));
        table.pci_bus_ids[physical_id] = item.value().get<std::string>();
      }
    }
  } catch (const std::exception& e) {  // json type errors, stoul on a bad key
    return DataLoss("embedded partition table " + table.name + ": " + e.what());
  }
  return table;
}

}  // namespace

const SimPartition* SimTable::Find(std::uint32_t id) const {
  for (const SimPartition& partition : partitions) {
    if (partition.id == id) return &partition;
  }
  return nullptr;
}

Result<const SimTable*> FindTable(std::string_view name) {
  // Parsed tables are never freed: the library may be called until the process exits.
  static std::mutex mu;
  static auto* cache = new std::map<std::string, SimTable, std::less<>>();
  std::lock_guard lock(mu);
  if (auto it = cache->find(name); it != cache->end()) return &it->second;
  std::string known;
  for (const EmbeddedTable& embedded : EmbeddedTables()) {
    if (embedded.name == name) {
      GFP_ASSIGN_OR_RETURN(SimTable table, ParseTable(embedded));
      auto [it, inserted] = cache->emplace(std::string(name), std::move(table));
      return &it->second;
    }
    known += (known.empty() ? "" : ", ") + std::string(embedded.name);
  }
  return NotFound("no simulated partition table named \"" + std::string(name) +
                  "\" (known: " + known + ")");
}

}  // namespace gfp::fmsim
