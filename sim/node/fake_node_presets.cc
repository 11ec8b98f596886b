#include "sim/node/fake_node_presets.h"

namespace gfp::sim {
namespace {

// Module order differs from PCI order on real boards; the H100 one is the real example of
// fabric-manager.md §3.7 (modules 1..8 -> c3, df, d1, 9d, 43, 61, 52, 1b).
const PresetLayout kH100 = {
    "2330",
    "GH100 [H100 SXM5 80GB]",
    "22a3",
    "GH100 [H100 NVSwitch]",
    {{"0000:1b:00.0", 8},
     {"0000:43:00.0", 5},
     {"0000:52:00.0", 7},
     {"0000:61:00.0", 6},
     {"0000:9d:00.0", 4},
     {"0000:c3:00.0", 1},
     {"0000:d1:00.0", 3},
     {"0000:df:00.0", 2}},
    {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"},
};

// Illustrative layout (not taken from a real host): a different permutation than H100.
const PresetLayout kB200 = {
    "2901",
    "GB100 [B200]",
    "22a4",  // illustrative NVSwitch device id
    "GB100 [B200 NVSwitch]",
    {{"0000:1a:00.0", 5},
     {"0000:3c:00.0", 7},
     {"0000:4d:00.0", 6},
     {"0000:5d:00.0", 8},
     {"0000:9a:00.0", 1},
     {"0000:ba:00.0", 3},
     {"0000:cc:00.0", 2},
     {"0000:dc:00.0", 4}},
    {"0000:0a:00.0", "0000:0b:00.0"},
};

// Two baseboards: modules 1-8 on the bottom tray, 9-16 on the top one (GPIO strapping),
// interleaved in PCI order.
const PresetLayout kA100x16 = {
    "20b2",
    "GA100 [A100 SXM4 80GB]",
    "1af1",
    "GA100 [A100 NVSwitch]",
    {{"0000:07:00.0", 3},
     {"0000:0f:00.0", 4},
     {"0000:13:00.0", 11},
     {"0000:19:00.0", 12},
     {"0000:47:00.0", 1},
     {"0000:4e:00.0", 2},
     {"0000:53:00.0", 9},
     {"0000:59:00.0", 10},
     {"0000:87:00.0", 7},
     {"0000:90:00.0", 8},
     {"0000:93:00.0", 15},
     {"0000:99:00.0", 16},
     {"0000:b7:00.0", 5},
     {"0000:bd:00.0", 6},
     {"0000:c6:00.0", 13},
     {"0000:cc:00.0", 14}},
    {"0000:e0:00.0", "0000:e1:00.0", "0000:e2:00.0", "0000:e3:00.0", "0000:e4:00.0",
     "0000:e5:00.0"},
};

// DGX A100 (40GB) PCI addresses; mdevs live on these GPUs in the mdev preset.
const PresetLayout kA100x8Mdev = {
    "20b0",
    "GA100 [A100 SXM4 40GB]",
    "1af1",
    "GA100 [A100 NVSwitch]",
    {{"0000:07:00.0", 3},
     {"0000:0f:00.0", 4},
     {"0000:47:00.0", 1},
     {"0000:4e:00.0", 2},
     {"0000:87:00.0", 7},
     {"0000:90:00.0", 8},
     {"0000:b7:00.0", 5},
     {"0000:bd:00.0", 6}},
    {"0000:e0:00.0", "0000:e1:00.0", "0000:e2:00.0", "0000:e3:00.0", "0000:e4:00.0",
     "0000:e5:00.0"},
};

// Four Grace Hopper superchips (one GPU each, PCI domains 0009/0019/... as on GH200 boards),
// each socket its own NUMA node; no NVSwitch.
const PresetLayout kGh200x4 = {
    "2342",
    "GH100 [GH200 120GB / 480GB]",
    "",
    "",
    {{"0009:01:00.0", 1, 0},
     {"0019:01:00.0", 2, 1},
     {"0029:01:00.0", 3, 2},
     {"0039:01:00.0", 4, 3}},
    {},
};

}  // namespace

const PresetLayout& LayoutOf(VgpuNodePreset preset) {
  switch (preset) {
    case VgpuNodePreset::kMdevA100:
      return kA100x8Mdev;
    case VgpuNodePreset::kGraceGh200:
      return kGh200x4;
    case VgpuNodePreset::kVfH100:
      break;
  }
  return kH100;  // the VF node's PFs are the H100 preset's GPUs, same module ids
}

const char* VgpuNodePresetName(VgpuNodePreset preset) {
  switch (preset) {
    case VgpuNodePreset::kMdevA100:
      return "mdev-a100";
    case VgpuNodePreset::kGraceGh200:
      return "grace-gh200";
    case VgpuNodePreset::kVfH100:
      break;
  }
  return "vf-h100";
}

const PresetLayout& LayoutOf(NodePreset preset) {
  switch (preset) {
    case NodePreset::kHgxB200:
      return kB200;
    case NodePreset::kHgxA100x16:
      return kA100x16;
    case NodePreset::kHgxH100:
      break;
  }
  return kH100;
}

const char* NodePresetName(NodePreset preset) {
  switch (preset) {
    case NodePreset::kHgxB200:
      return "hgx-b200";
    case NodePreset::kHgxA100x16:
      return "hgx-a100-16";
    case NodePreset::kHgxH100:
      break;
  }
  return "hgx-h100";
}

}  // namespace gfp::sim
