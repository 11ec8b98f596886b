// Writes a real directory tree that looks like sysfs + /dev of an NVSwitch GPU server, so the
// discovery code, the health checks and the demo run against files instead of mocks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::sim {

enum class NodePreset {
  kHgxH100,     // 8 x H100 SXM5 (10de:2330), 4 NVSwitches
  kHgxB200,     // 8 x B200 (10de:2901), 2 NVSwitches
  kHgxA100x16,  // 16 x A100 SXM4 80GB (10de:20b2) on two baseboards, 6 NVSwitches
};

const char* NodePresetName(NodePreset preset);

struct FakeNodeSpec {
  NodePreset preset = NodePreset::kHgxH100;
  bool with_iommufd = false;         // create <dev>/iommu and <dev>/vfio/devices/vfioN
  bool write_module_mapping = true;  // <root>/gpu-pci-module-mapping.json
  bool write_pci_ids = true;         // <root>/pci.ids
};

struct FakeGpu {
  std::string bdf;          // "0000:1b:00.0"
  std::uint32_t module_id;  // FM physical id
  int numa_node;
  std::string iommu_group;  // "40"
  std::string vfio_device;  // "vfio0" (in <BDF>/vfio-dev/)
};

// NVSwitch functions and the odd non-NVIDIA device: present in sysfs, never discovered.
struct FakePciFunction {
  std::string bdf;
  std::string vendor_id;  // "10de", "8086"
  std::string device_id;
  std::string driver;  // "nvidia", "xhci_hcd"
  std::string iommu_group;
};

// What BuildFakeNode made. The lists describe the tree as built; mutators change only files.
struct FakeNode {
  NodePreset preset = NodePreset::kHgxH100;
  std::filesystem::path root;
  std::filesystem::path sysfs_root;           // <root>/sys  (for --sysfs-root)
  std::filesystem::path dev_root;             // <root>/dev  (for --dev-root)
  std::filesystem::path module_mapping_file;  // empty when not written
  std::filesystem::path pci_ids_file;         // empty when not written
  std::string gpu_device_id;                  // "2330"
  std::string gpu_pci_ids_name;               // "GH100 [H100 SXM5 80GB]" as in pci.ids
  std::vector<FakeGpu> gpus;                  // PCI (BDF) order
  std::vector<FakePciFunction> nvswitches;
  std::vector<FakePciFunction> other_devices;

  const FakeGpu* FindGpu(const std::string& bdf) const;
  std::vector<std::string> GpuBdfs() const;
  // The real device directory, <root>/sys/devices/pci<domain>:<bus>/<bdf>.
  std::filesystem::path DeviceDir(const std::string& bdf) const;

  // Mutators for health / re-check tests. Each names the path it failed on.
  Status RemoveVfioGroupNode(const std::string& iommu_group) const;
  Status RecreateVfioGroupNode(const std::string& iommu_group) const;
  // Points <BDF>/driver at <sys>/bus/pci/drivers/<driver> (created if needed);
  // an empty `driver` unbinds (removes the link).
  Status RebindDriver(const std::string& bdf, const std::string& driver) const;
  Status SetIommuGroup(const std::string& bdf, const std::string& iommu_group) const;
  Status SetNumaNode(const std::string& bdf, int numa_node) const;
  // Hot-unplug: removes <sys>/bus/pci/devices/<BDF> and the device directory.
  Status RemoveDevice(const std::string& bdf) const;
};

// Builds the node under `root_dir` (created if missing; must not already hold a sys/ or dev/).
Result<FakeNode> BuildFakeNode(const std::filesystem::path& root_dir, const FakeNodeSpec& spec);

}  // namespace gfp::sim
