// Internal to sim/node: the shared pieces of the node builders (paths of the fake sysfs and the
// writer of one PCI function), so the vGPU/Grace builder lays files out exactly as the rest.
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"
#include "sim/node/fake_node.h"
#include "sim/node/fake_node_presets.h"

namespace gfp::sim::internal {

// Groups are numbered like a real host: platform devices low, GPUs further up.
inline constexpr int kFirstOtherGroup = 1;
inline constexpr int kFirstSwitchGroup = 10;
inline constexpr int kFirstGpuGroup = 40;
inline constexpr int kFirstChildGroup = 100;  // VFs and mdevs

std::filesystem::path SysDir(const std::filesystem::path& root);
std::filesystem::path GroupDir(const std::filesystem::path& root, const std::string& group);
// pci<domain>:<bus> host bridge directory, as in /sys/devices/pci0000:17/<bdf>.
std::filesystem::path DeviceDirOf(const std::filesystem::path& root, const std::string& bdf);
std::filesystem::path BusEntry(const std::filesystem::path& root, const std::string& bdf);

struct FunctionFiles {
  std::string bdf, vendor, device, driver, group;
  int numa = 0;
  std::string vfio_device;  // empty: no vfio-dev/ entry
};

Status WritePciFunction(const std::filesystem::path& root, const FunctionFiles& f);

struct BuildOptions {
  bool with_iommufd = false;
  bool write_module_mapping = true;
  bool write_pci_ids = true;
  std::string gpu_driver = "vfio-pci";
};

// The GPUs, NVSwitches, the USB controller, pci.ids and the mapping file of `layout`.
Result<FakeNode> BuildFromLayout(const std::filesystem::path& root_dir, const PresetLayout& layout,
                                 const BuildOptions& options);

}  // namespace gfp::sim::internal
