// The fixed facts of each preset: which BDFs, module ids and names a node has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/node/fake_node.h"

namespace gfp::sim {

struct PresetGpu {
  std::string bdf;
  std::uint32_t module_id;
  int numa_node = -1;  // -1: from the bus number (below 0x80 -> 0, else 1)
};

struct PresetLayout {
  std::string gpu_device_id;
  std::string gpu_name;  // pci.ids text
  std::string switch_device_id;
  std::string switch_name;
  std::vector<PresetGpu> gpus;  // PCI order
  std::vector<std::string>
      switch_bdfs;  // NVSwitch functions, left on the nvidia driver (may be none)
};

const PresetLayout& LayoutOf(NodePreset preset);
const PresetLayout& LayoutOf(VgpuNodePreset preset);

}  // namespace gfp::sim
