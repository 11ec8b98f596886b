// The vGPU and Grace nodes: mdevs under their parent GPU, SR-IOV VFs with the nvidia vGPU
// attributes, and EGM devices, laid out as the kernel and the NVIDIA driver show them.
#include <cstdio>

#include "sim/node/fake_node.h"
#include "sim/node/fake_node_presets.h"
#include "sim/node/fake_node_sysfs.h"
#include "sim/node/fake_tree_writer.h"

namespace gfp::sim {
namespace {

namespace fs = std::filesystem;
using internal::DeviceDirOf;
using internal::GroupDir;
using internal::SysDir;

// A100 40GB mdev types (the nvidia-NNN directory names are illustrative).
constexpr const char* kType4C = "GRID A100-4C";
constexpr const char* kType8C = "GRID A100-8C";

// Illustrative type ids; the line format is the driver's ("ID    : vGPU Name" header, then
// "<id> : <name>" lines), the one PR 192 parses.
constexpr const char* kH100Catalog =
    "ID    : vGPU Name\n"
    "1057  : NVIDIA H100XM-1-10C\n"
    "1061  : NVIDIA H100XM-10C\n"
    "1062  : NVIDIA H100XM-20C\n"
    "1063  : NVIDIA H100XM-40C\n"
    "1064  : NVIDIA H100XM-80C\n";
constexpr const char* kH100Xm80cId = "1064";
constexpr int kVfsPerGpu = 4;  // functions .4 to .7, as H100 places its first VF at offset 4

std::string MdevUuid(int index) {
  char text[40];
  std::snprintf(text, sizeof text, "6a3e2b10-5c7d-4f1e-8a9b-%012x", index + 1);
  return text;
}

Status WriteMdevTypes(const fs::path& parent_dir) {
  for (auto [dir, name] : {std::pair{"nvidia-474", kType4C}, std::pair{"nvidia-475", kType8C}}) {
    const fs::path type_dir = parent_dir / "mdev_supported_types" / dir;
    GFP_RETURN_IF_ERROR(WriteTextFile(type_dir / "name", std::string(name) + "\n"));
    GFP_RETURN_IF_ERROR(WriteTextFile(type_dir / "device_api", "vfio-pci\n"));
  }
  return Status::Ok();
}

Status WriteMdev(const FakeNode& node, const FakeMdev& mdev) {
  const fs::path parent_dir = DeviceDirOf(node.root, mdev.parent_bdf);
  const fs::path dir = parent_dir / mdev.uuid;
  GFP_RETURN_IF_ERROR(
      MakeRelativeSymlink(parent_dir / "mdev_supported_types" / mdev.type_dir, dir / "mdev_type"));
  const fs::path driver = SysDir(node.root) / "bus" / "mdev" / "drivers" / "vfio_mdev";
  GFP_RETURN_IF_ERROR(MakeDirectories(driver));
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(driver, dir / "driver"));
  GFP_RETURN_IF_ERROR(MakeDirectories(GroupDir(node.root, mdev.iommu_group)));
  GFP_RETURN_IF_ERROR(
      MakeRelativeSymlink(GroupDir(node.root, mdev.iommu_group), dir / "iommu_group"));
  GFP_RETURN_IF_ERROR(WriteTextFile(node.dev_root / "vfio" / mdev.iommu_group, ""));
  return MakeRelativeSymlink(dir, SysDir(node.root) / "bus" / "mdev" / "devices" / mdev.uuid);
}

// Two "GRID A100-4C" on each GPU but the last, which holds one "GRID A100-8C".
Status AddMdevs(FakeNode* node) {
  int index = 0;
  for (std::size_t g = 0; g < node->gpus.size(); ++g) {
    const std::string& parent = node->gpus[g].bdf;
    GFP_RETURN_IF_ERROR(WriteMdevTypes(DeviceDirOf(node->root, parent)));
    const bool last = g + 1 == node->gpus.size();
    for (int k = 0; k < (last ? 1 : 2); ++k, ++index) {
      FakeMdev mdev{MdevUuid(index), last ? kType8C : kType4C, last ? "nvidia-475" : "nvidia-474",
                    parent, std::to_string(internal::kFirstChildGroup + index)};
      GFP_RETURN_IF_ERROR(WriteMdev(*node, mdev));
      node->mdevs.push_back(std::move(mdev));
    }
  }
  return Status::Ok();
}

Status WriteVf(const FakeNode& node, const FakeGpu& pf, const FakeVf& vf, int index) {
  GFP_RETURN_IF_ERROR(
      internal::WritePciFunction(node.root, {vf.bdf, "10de", node.gpu_device_id, "nvidia",
                                             vf.iommu_group, pf.numa_node, vf.vfio_device}));
  const fs::path pf_dir = DeviceDirOf(node.root, pf.bdf);
  const fs::path dir = DeviceDirOf(node.root, vf.bdf);
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(pf_dir, dir / "physfn"));
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(dir, pf_dir / ("virtfn" + std::to_string(index))));
  GFP_RETURN_IF_ERROR(WriteTextFile(dir / "nvidia" / "current_vgpu_type", vf.vgpu_type_id + "\n"));
  // A GPU holding a full-size vGPU has room for no other: its VFs list nothing creatable.
  GFP_RETURN_IF_ERROR(WriteTextFile(dir / "nvidia" / "creatable_vgpu_types", ""));
  return WriteTextFile(node.dev_root / "vfio" / vf.iommu_group, "");
}

// Four VFs per GPU; the first carries NVIDIA H100XM-80C, the others no type ("0").
Status AddVfs(FakeNode* node) {
  int index = 0;
  for (const FakeGpu& pf : node->gpus) {
    const fs::path pf_dir = DeviceDirOf(node->root, pf.bdf);
    GFP_RETURN_IF_ERROR(WriteTextFile(pf_dir / "sriov_totalvfs", "32\n"));
    GFP_RETURN_IF_ERROR(WriteTextFile(pf_dir / "sriov_numvfs", std::to_string(kVfsPerGpu) + "\n"));
    GFP_RETURN_IF_ERROR(WriteTextFile(pf_dir / "nvidia" / "creatable_vgpu_types", kH100Catalog));
    for (int k = 0; k < kVfsPerGpu; ++k, ++index) {
      const bool configured = k == 0;
      FakeVf vf{pf.bdf.substr(0, 11) + std::to_string(4 + k),
                pf.bdf,
                std::to_string(internal::kFirstChildGroup + index),
                "vfio" + std::to_string(index),
                configured ? kH100Xm80cId : "0",
                configured ? "NVIDIA H100XM-80C" : ""};
      GFP_RETURN_IF_ERROR(WriteVf(*node, pf, vf, k));
      node->vfs.push_back(std::move(vf));
    }
  }
  return Status::Ok();
}

// One EGM device per superchip, listing its GPU.
Status AddEgms(FakeNode* node) {
  for (std::size_t i = 0; i < node->gpus.size(); ++i) {
    FakeEgm egm{"egm" + std::to_string(i), {node->gpus[i].bdf}};
    const fs::path dir = SysDir(node->root) / "devices" / "virtual" / "egm" / egm.name;
    GFP_RETURN_IF_ERROR(WriteTextFile(dir / "gpu_devices", egm.gpu_bdfs.front() + "\n"));
    GFP_RETURN_IF_ERROR(MakeRelativeSymlink(dir, SysDir(node->root) / "class" / "egm" / egm.name));
    GFP_RETURN_IF_ERROR(WriteTextFile(node->dev_root / egm.name, ""));
    node->egms.push_back(std::move(egm));
  }
  return Status::Ok();
}

const char* GpuDriverOf(VgpuNodePreset preset) {
  return preset == VgpuNodePreset::kGraceGh200 ? "nvgrace_gpu_vfio_pci" : "nvidia";
}

}  // namespace

Result<FakeNode> BuildVgpuNode(const std::filesystem::path& root_dir, const VgpuNodeSpec& spec) {
  internal::BuildOptions options;
  options.write_module_mapping = spec.write_module_mapping;
  options.write_pci_ids = spec.write_pci_ids;
  options.gpu_driver = GpuDriverOf(spec.preset);
  GFP_ASSIGN_OR_RETURN(FakeNode node,
                       internal::BuildFromLayout(root_dir, LayoutOf(spec.preset), options));
  node.vgpu_preset = spec.preset;
  switch (spec.preset) {
    case VgpuNodePreset::kMdevA100:
      GFP_RETURN_IF_ERROR(AddMdevs(&node));
      break;
    case VgpuNodePreset::kVfH100:
      GFP_RETURN_IF_ERROR(AddVfs(&node));
      break;
    case VgpuNodePreset::kGraceGh200:
      GFP_RETURN_IF_ERROR(AddEgms(&node));
      break;
  }
  return node;
}

std::filesystem::path FakeNode::MdevDir(const FakeMdev& mdev) const {
  return DeviceDirOf(root, mdev.parent_bdf) / mdev.uuid;
}

}  // namespace gfp::sim
