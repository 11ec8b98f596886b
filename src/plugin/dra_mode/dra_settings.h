// DRA mode's settings (SPEC §2.1 flags), checked before anything is created.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "plugin/dra/claim_files.h"

namespace gfp::plugin::dra_mode {

struct DraSettings {
  std::string driver = "gpu-fabric-plugin.io";  // --dra-driver-name
  std::string node;                             // --node-name: also the pool's name
  dra::ClaimFileDirs dirs;                      // --cdi-dir, <--kubelet-plugins-dir>/<driver>
  std::filesystem::path dev_root = "/dev";      // where /dev/iommu tells iommufd apart
};

}  // namespace gfp::plugin::dra_mode
