// The default partition tables (reference/fabric-manager.md §4), embedded at build time from
// sim/fm/tables/*.json so the simulator needs no data files at run time.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gfp::fmsim {

struct SimPartition {
  std::uint32_t id = 0;
  std::vector<std::uint32_t> physical_ids;
  std::uint32_t max_nvlinks = 0;
  std::uint32_t nvlinks_available = 0;
};

struct SimTable {
  std::string name;
  std::uint32_t nvlink_line_rate_mbps = 0;  // 0 when the reference gives none
  std::vector<SimPartition> partitions;
  // physical id -> the pciBusId FM reports for it; empty (FM reports "00000000:00:00.0") unless
  // the table has "pci_bus_ids", as HGX A100 / HGX-2 class FM does (fabric-manager.md §3.7).
  std::map<std::uint32_t, std::string> pci_bus_ids;

  const SimPartition* Find(std::uint32_t id) const;
};

// Table names: "h100", "b200", "a100", "hgx2". Parsed once per process.
Result<const SimTable*> FindTable(std::string_view name);

}  // namespace gfp::fmsim
