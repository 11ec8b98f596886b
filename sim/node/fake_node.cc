#include "sim/node/fake_node.h"

#include <algorithm>
#include <system_error>

#include "sim/node/fake_node_presets.h"
#include "sim/node/fake_node_sysfs.h"
#include "sim/node/fake_tree_writer.h"

namespace gfp::sim {
namespace internal {

namespace fs = std::filesystem;

namespace {

int BusOf(const std::string& bdf) { return std::stoi(bdf.substr(5, 2), nullptr, 16); }

// Sockets: buses below 0x80 hang off CPU 0, the rest off CPU 1 (typical 2-socket layout).
int NumaOf(const PresetGpu& gpu) {
  if (gpu.numa_node >= 0) return gpu.numa_node;
  return BusOf(gpu.bdf) < 0x80 ? 0 : 1;
}

fs::path DriverDir(const fs::path& root, const std::string& driver) {
  return SysDir(root) / "bus" / "pci" / "drivers" / driver;
}

}  // namespace

fs::path SysDir(const fs::path& root) { return root / "sys"; }
fs::path GroupDir(const fs::path& root, const std::string& group) {
  return SysDir(root) / "kernel" / "iommu_groups" / group;
}
fs::path DeviceDirOf(const fs::path& root, const std::string& bdf) {
  return SysDir(root) / "devices" / ("pci" + bdf.substr(0, 7)) / bdf;
}
fs::path BusEntry(const fs::path& root, const std::string& bdf) {
  return SysDir(root) / "bus" / "pci" / "devices" / bdf;
}

Status WritePciFunction(const fs::path& root, const FunctionFiles& f) {
  const fs::path dir = DeviceDirOf(root, f.bdf);
  GFP_RETURN_IF_ERROR(WriteTextFile(dir / "vendor", "0x" + f.vendor + "\n"));
  GFP_RETURN_IF_ERROR(WriteTextFile(dir / "device", "0x" + f.device + "\n"));
  GFP_RETURN_IF_ERROR(WriteTextFile(dir / "numa_node", std::to_string(f.numa) + "\n"));
  GFP_RETURN_IF_ERROR(MakeDirectories(DriverDir(root, f.driver)));
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(DriverDir(root, f.driver), dir / "driver"));
  GFP_RETURN_IF_ERROR(MakeDirectories(GroupDir(root, f.group)));
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(GroupDir(root, f.group), dir / "iommu_group"));
  GFP_RETURN_IF_ERROR(MakeRelativeSymlink(dir, GroupDir(root, f.group) / "devices" / f.bdf));
  if (!f.vfio_device.empty()) {
    GFP_RETURN_IF_ERROR(MakeDirectories(dir / "vfio-dev" / f.vfio_device));
  }
  return MakeRelativeSymlink(dir, BusEntry(root, f.bdf));
}

namespace {

std::string PciIdsText(const PresetLayout& layout) {
  // The Intel block comes first and the NVIDIA block is followed by another vendor, so the
  // lookup has to find the right block and stop at its end.
  return "#\n#\tList of PCI ID's (fake node subset)\n#\n"
         "8086  Intel Corporation\n"
         "\ta1af  200 Series/Z370 Chipset Family USB 3.0 xHCI Controller\n"
         "10de  NVIDIA Corporation\n" +
         (layout.switch_device_id.empty()
              ? std::string()
              : "\t" + layout.switch_device_id + "  " + layout.switch_name + "\n") +
         "# GPU line\n"
         "\t" +
         layout.gpu_device_id + "  " + layout.gpu_name +
         "\n"
         "\t\t10de 16a1  " +
         layout.gpu_name +
         " (sub-device)\n"
         "10df  Emulex Corporation\n";
}

// nvidia-smi's spelling: 8-digit domain, upper-case hex, in PCI order.
std::string MappingText(const std::vector<FakeGpu>& gpus) {
  std::string text = "{";
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    std::string key = "0000" + gpus[i].bdf;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](char c) { return (c >= 'a' && c <= 'f') ? static_cast<char>(c - 32) : c; });
    text += (i == 0 ? "\"" : ",\"") + key + "\": \"" + std::to_string(gpus[i].module_id) + "\"";
  }
  return text + "}\n";
}

Status WriteGpus(const PresetLayout& layout, const BuildOptions& options, FakeNode* node) {
  const bool vfio = options.gpu_driver != "nvidia";  // on nvidia no VFIO nodes exist
  for (std::size_t i = 0; i < layout.gpus.size(); ++i) {
    FakeGpu gpu{layout.gpus[i].bdf, layout.gpus[i].module_id, NumaOf(layout.gpus[i]),
                std::to_string(kFirstGpuGroup + static_cast<int>(i)),
                vfio ? "vfio" + std::to_string(i) : std::string()};
    GFP_RETURN_IF_ERROR(
        WritePciFunction(node->root, {gpu.bdf, "10de", layout.gpu_device_id, options.gpu_driver,
                                      gpu.iommu_group, gpu.numa_node, gpu.vfio_device}));
    if (vfio) {
      GFP_RETURN_IF_ERROR(WriteTextFile(node->dev_root / "vfio" / gpu.iommu_group, ""));
    }
    if (vfio && options.with_iommufd) {
      GFP_RETURN_IF_ERROR(WriteTextFile(node->dev_root / "vfio" / "devices" / gpu.vfio_device, ""));
    }
    node->gpus.push_back(std::move(gpu));
  }
  return Status::Ok();
}

Status WriteOtherFunctions(const PresetLayout& layout, FakeNode* node) {
  for (std::size_t i = 0; i < layout.switch_bdfs.size(); ++i) {
    FakePciFunction sw{layout.switch_bdfs[i], "10de", layout.switch_device_id, "nvidia",
                       std::to_string(kFirstSwitchGroup + static_cast<int>(i))};
    GFP_RETURN_IF_ERROR(WritePciFunction(
        node->root,
        {sw.bdf, sw.vendor_id, sw.device_id, sw.driver, sw.iommu_group, NumaOf({sw.bdf, 0}), {}}));
    node->nvswitches.push_back(std::move(sw));
  }
  FakePciFunction usb{"0000:00:14.0", "8086", "a1af", "xhci_hcd", std::to_string(kFirstOtherGroup)};
  GFP_RETURN_IF_ERROR(WritePciFunction(
      node->root, {usb.bdf, usb.vendor_id, usb.device_id, usb.driver, usb.iommu_group, 0, {}}));
  node->other_devices.push_back(std::move(usb));
  return Status::Ok();
}

}  // namespace

Result<FakeNode> BuildFromLayout(const fs::path& root_dir, const PresetLayout& layout,
                                 const BuildOptions& options) {
  std::error_code ec;
  const fs::path root = fs::absolute(root_dir, ec).lexically_normal();
  if (ec) return Internal("fake node: cannot resolve " + root_dir.string() + ": " + ec.message());
  for (const char* sub : {"sys", "dev"}) {
    if (fs::exists(root / sub, ec)) {
      return AlreadyExists("fake node: " + (root / sub).string() + " already exists");
    }
  }
  FakeNode node;
  node.root = root;
  node.sysfs_root = SysDir(root);
  node.dev_root = root / "dev";
  node.gpu_device_id = layout.gpu_device_id;
  node.gpu_pci_ids_name = layout.gpu_name;
  node.gpu_driver = options.gpu_driver;

  GFP_RETURN_IF_ERROR(WriteTextFile(node.dev_root / "vfio" / "vfio", ""));
  if (options.with_iommufd) GFP_RETURN_IF_ERROR(WriteTextFile(node.dev_root / "iommu", ""));
  GFP_RETURN_IF_ERROR(WriteGpus(layout, options, &node));
  GFP_RETURN_IF_ERROR(WriteOtherFunctions(layout, &node));

  if (options.write_pci_ids) {
    node.pci_ids_file = root / "pci.ids";
    GFP_RETURN_IF_ERROR(WriteTextFile(node.pci_ids_file, PciIdsText(layout)));
  }
  if (options.write_module_mapping) {
    node.module_mapping_file = root / "gpu-pci-module-mapping.json";
    GFP_RETURN_IF_ERROR(WriteTextFile(node.module_mapping_file, MappingText(node.gpus)));
  }
  return node;
}

}  // namespace internal

Result<FakeNode> BuildFakeNode(const std::filesystem::path& root_dir, const FakeNodeSpec& spec) {
  internal::BuildOptions options;
  options.with_iommufd = spec.with_iommufd;
  options.write_module_mapping = spec.write_module_mapping;
  options.write_pci_ids = spec.write_pci_ids;
  auto node = internal::BuildFromLayout(root_dir, LayoutOf(spec.preset), options);
  if (node.ok()) node->preset = spec.preset;
  return node;
}

const FakeGpu* FakeNode::FindGpu(const std::string& bdf) const {
  for (const FakeGpu& gpu : gpus) {
    if (gpu.bdf == bdf) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> FakeNode::GpuBdfs() const {
  std::vector<std::string> bdfs;
  for (const FakeGpu& gpu : gpus) bdfs.push_back(gpu.bdf);
  return bdfs;
}

std::filesystem::path FakeNode::DeviceDir(const std::string& bdf) const {
  return internal::DeviceDirOf(root, bdf);
}

}  // namespace gfp::sim
