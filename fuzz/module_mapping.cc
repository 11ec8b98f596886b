// Fuzz target: the BDF -> module id mapping file (SPEC §4.2). ParseModuleMapping must accept or
// refuse with a message; an accepted mapping must be a bijection and pass the coverage check
// against its own BDFs.
#include "adapters/mapping/module_mapping.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto mapping = gfp::adapters::mapping::ParseModuleMapping(json, "/fuzz/mapping.json");
  if (!mapping.ok()) return 0;
  if (mapping->module_by_bdf.size() != mapping->bdf_by_module.size()) std::abort();
  std::vector<std::string> bdfs;
  for (const auto& [bdf, module] : mapping->module_by_bdf) {
    if (mapping->BdfOf(module) != bdf || mapping->ModuleOf(bdf) != module) std::abort();
    bdfs.push_back(bdf);
  }
  auto covers = gfp::adapters::mapping::CheckModuleMappingCovers(*mapping, bdfs);
  if (!covers.ok() || !covers->empty()) std::abort();
  return 0;
}
