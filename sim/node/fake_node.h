// Writes a real directory tree that looks like sysfs + /dev of an NVSwitch GPU server, so the
// discovery code, the health checks and the demo run against files instead of mocks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
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

// Nodes whose GPUs are not (only) handed over whole: vGPU and Grace (issue 10). Kept apart from
// NodePreset so code that switches over the passthrough presets is not affected.
enum class VgpuNodePreset {
  kMdevA100,    // 8 x A100 SXM4 40GB (10de:20b0) on nvidia; mdevs "GRID A100-4C" (+ one -8C)
  kVfH100,      // 8 x H100 SXM5 (10de:2330) on nvidia; 4 SR-IOV VFs each, VF .4 = H100XM-80C
  kGraceGh200,  // 4 x GH200 (10de:2342) on nvgrace_gpu_vfio_pci; egm0..egm3, one GPU each
};

const char* VgpuNodePresetName(VgpuNodePreset preset);

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

struct VgpuNodeSpec {
  VgpuNodePreset preset = VgpuNodePreset::kMdevA100;
  bool write_module_mapping = true;
  bool write_pci_ids = true;
};

// A mediated device: <sys>/bus/mdev/devices/<uuid> -> the directory under its parent GPU.
struct FakeMdev {
  std::string uuid;
  std::string type_name;  // mdev_type/name, e.g. "GRID A100-4C"
  std::string type_dir;   // mdev_supported_types entry, e.g. "nvidia-474"
  std::string parent_bdf;
  std::string iommu_group;
};

// An SR-IOV VF of a GPU on the nvidia driver (vGPU 17+ vendor VFIO).
struct FakeVf {
  std::string bdf;           // "0000:1b:00.4"
  std::string parent_bdf;    // its physfn
  std::string iommu_group;   // own group, /dev/vfio/<group> exists
  std::string vfio_device;   // "vfio8" (in <BDF>/vfio-dev/)
  std::string vgpu_type_id;  // nvidia/current_vgpu_type as built: "0" (none) or e.g. "1064"
  std::string profile;       // "NVIDIA H100XM-80C", empty when not configured
};

// A Grace extended-GPU-memory device: <sys>/class/egm/<name>/gpu_devices and <dev>/<name>.
struct FakeEgm {
  std::string name;  // "egm0"
  std::vector<std::string> gpu_bdfs;
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
  std::optional<VgpuNodePreset> vgpu_preset;  // set by BuildVgpuNode
  std::string gpu_driver = "vfio-pci";
  std::vector<FakeMdev> mdevs;  // in UUID order
  std::vector<FakeVf> vfs;      // PCI order
  std::vector<FakeEgm> egms;

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
  // Hot-unplug: removes <sys>/bus/pci/devices/<BDF> and the device directory, and, as the
  // kernel does, the mdevs on it (their bus/mdev entries) and its VFs.
  Status RemoveDevice(const std::string& bdf) const;
  // Removes <sys>/bus/mdev/devices/<uuid> and the mdev's directory under its parent.
  Status RemoveMdev(const std::string& uuid) const;
  // Writes <VF>/nvidia/current_vgpu_type ("0" clears the type).
  Status SetVfVgpuType(const std::string& vf_bdf, const std::string& type_id) const;
  // The sysfs directory of an mdev: <parent device dir>/<uuid>.
  std::filesystem::path MdevDir(const FakeMdev& mdev) const;
};

// Builds the node under `root_dir` (created if missing; must not already hold a sys/ or dev/).
Result<FakeNode> BuildFakeNode(const std::filesystem::path& root_dir, const FakeNodeSpec& spec);
// Same rules as BuildFakeNode, for the vGPU and Grace nodes.
Result<FakeNode> BuildVgpuNode(const std::filesystem::path& root_dir, const VgpuNodeSpec& spec);

}  // namespace gfp::sim
