// The BDF -> GPU module (FM physical) id file (SPEC §4.2). FM reports partition GPUs only by
// module id, so this file is the only link between a partition and the devices kubelet sees:
// any doubt in it is a startup error rather than a guess.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace gfp::adapters::mapping {

// The largest mapping file serve reads (and `module-mapping check` with it); `generate` refuses to
// write a larger one.
inline constexpr std::size_t kMaxModuleMappingFileBytes = 1024 * 1024;

struct ModuleMapping {
  std::string source;                                  // the file, for messages
  std::map<std::string, std::uint32_t> module_by_bdf;  // canonical BDF -> module id
  std::map<std::uint32_t, std::string> bdf_by_module;

  std::optional<std::uint32_t> ModuleOf(const std::string& bdf) const;
  std::optional<std::string> BdfOf(std::uint32_t module_id) const;
};

// Parses `json` ({"00000000:1B:00.0": "8", ...}); `source` names the file in messages:
// "module mapping /x/y.json: key \"0000:1b:00.0\": module id \"abc\" is not a decimal number".
// Rejects malformed JSON, a non-object, malformed BDF keys, the same BDF twice (also after
// normalization), non-string or non-decimal ids, id 0 or above 4294967295, and duplicate ids.
Result<ModuleMapping> ParseModuleMapping(std::string_view json, std::string_view source);

Result<ModuleMapping> LoadModuleMapping(const std::filesystem::path& path);

// Checks the mapping against the discovered GPUs: any discovered BDF without an entry is a
// FailedPrecondition naming them all; entries for BDFs not discovered are returned as
// warnings (the file is written for the whole board, some GPUs may be on another driver).
Result<std::vector<std::string>> CheckModuleMappingCovers(
    const ModuleMapping& mapping, std::span<const std::string> discovered_bdfs);

struct CheckedModuleMapping {
  ModuleMapping mapping;
  std::vector<std::string> warnings;
};

// LoadModuleMapping + CheckModuleMappingCovers.
Result<CheckedModuleMapping> LoadModuleMappingFor(const std::filesystem::path& path,
                                                  std::span<const std::string> discovered_bdfs);

}  // namespace gfp::adapters::mapping
