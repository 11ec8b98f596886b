// Fuzz target: the sysfs reader on random trees. The bytes are a small program that builds a
// directory tree under a tmpfs scratch dir (devices, attribute files with odd contents, symlinks
// that dangle, loop or leave the root, FIFOs where files belong, mdevs, EGMs, /dev nodes); then the
// node scan (plugin::core::ScanNode) and every host check the plugin runs on a served device
// (CheckDeviceUnchanged, CheckMdevUnchanged, CheckVfUnchanged, the /dev/vfio node, the container
// device specs) run on it. They must return values or errors: no crash, no hang.
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adapters/host/allocation_device_specs.h"
#include "adapters/host/device_recheck.h"
#include "adapters/host/mdev_discovery.h"
#include "adapters/host/pci_ids.h"
#include "adapters/host/vfio_nodes.h"
#include "adapters/host/vgpu_vf_discovery.h"
#include "fuzz/fuzz_support.h"
#include "plugin/core/node_inventory.h"

namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 4> kBdfs = {"0000:1b:00.0", "0000:1b:00.4", "0000:2a:00.0",
                                              "0000:3d:00.1"};
constexpr std::array<const char*, 2> kMdevs = {"6a3e2b10-5c7d-4f1e-8a9b-000000000001",
                                               "6a3e2b10-5c7d-4f1e-8a9b-000000000002"};
// Files the readers look at, relative to a device directory.
constexpr std::array<const char*, 12> kAttributes = {"vendor",
                                                     "device",
                                                     "numa_node",
                                                     "iommu_group",
                                                     "driver",
                                                     "physfn",
                                                     "vfio-dev/vfio3",
                                                     "nvidia/current_vgpu_type",
                                                     "nvidia/creatable_vgpu_types",
                                                     "mdev_type/name",
                                                     "mdev_supported_types/nvidia-474/name",
                                                     "iommu"};
constexpr std::array<const char*, 7> kLinkNames = {"driver",   "iommu_group", "physfn", "mdev_type",
                                                   "vfio-dev", "numa_node",   "vendor"};
// Link targets relative to <root>/sys; absolute ones leave the root on purpose.
constexpr std::array<const char*, 12> kLinkTargets = {
    "bus/pci/drivers/vfio-pci",
    "bus/pci/drivers/nvidia",
    "bus/pci/drivers/nvgrace_gpu_vfio_pci",
    "kernel/iommu_groups/40",
    "kernel/iommu_groups/x",
    "devices/pci0000:1b/0000:1b:00.0",
    "devices/pci0000:1b/0000:1b:00.0/mdev_supported_types/nvidia-474",
    "/",
    "/etc",
    "missing",
    ".",
    "devices"};
constexpr std::array<const char*, 6> kContents = {"0x10de\n", "0x2330\n", "0\n",
                                                  "-1\n",     "1064\n",   "GRID A100-4C\n"};

struct Tree {
  fs::path root, sys, dev;
  fs::path DeviceDir(const std::string& bdf) const {
    return sys / "devices" / ("pci" + bdf.substr(0, 7)) / bdf;
  }
};

void WriteFile(const fs::path& file, const std::string& content) {
  std::error_code ignored;
  fs::create_directories(file.parent_path(), ignored);
  fs::remove_all(file, ignored);  // never open an earlier op's FIFO for writing (it would block)
  std::ofstream(file, std::ios::binary) << content;
}

void Link(const fs::path& link, const fs::path& target) {
  std::error_code ignored;
  fs::create_directories(link.parent_path(), ignored);
  fs::remove(link, ignored);
  fs::create_symlink(target, link, ignored);
}

std::string Content(gfp::fuzz::ByteReader& in) {
  const std::uint8_t how = in.Byte();
  if (how % 2 == 0) return kContents[in.Pick(kContents.size())];
  return in.String(48);
}

fs::path LinkTarget(const Tree& t, gfp::fuzz::ByteReader& in) {
  const std::string target = kLinkTargets[in.Pick(kLinkTargets.size())];
  return target.front() == '/' ? fs::path(target) : t.sys / target;
}

void RunOp(const Tree& t, gfp::fuzz::ByteReader& in) {
  std::error_code ignored;
  const std::string bdf = kBdfs[in.Pick(kBdfs.size())];
  const fs::path dir = t.DeviceDir(bdf);
  switch (in.Pick(8)) {
    case 0:  // a device and its bus entry
      fs::create_directories(dir, ignored);
      Link(t.sys / "bus/pci/devices" / bdf, dir);
      break;
    case 1:  // an attribute file
      WriteFile(dir / kAttributes[in.Pick(kAttributes.size())], Content(in));
      break;
    case 2:  // a symlink in the device directory
      Link(dir / kLinkNames[in.Pick(kLinkNames.size())], LinkTarget(t, in));
      break;
    case 3:  // a FIFO where a file is expected
      fs::create_directories(dir, ignored);
      (void)::mkfifo((dir / kAttributes[in.Pick(3)]).c_str(), 0600);
      break;
    case 4: {  // an mdev under this device
      const std::string uuid = kMdevs[in.Pick(kMdevs.size())];
      fs::create_directories(dir / uuid, ignored);
      Link(t.sys / "bus/mdev/devices" / uuid, dir / uuid);
      Link(dir / uuid / "mdev_type", dir / "mdev_supported_types/nvidia-474");
      WriteFile(dir / "mdev_supported_types/nvidia-474/name", Content(in));
      break;
    }
    case 5: {  // an EGM and maybe its /dev node
      const std::string egm = "egm" + std::to_string(in.Pick(3));
      WriteFile(t.sys / "class/egm" / egm / "gpu_devices", in.String(64));
      if (in.Byte() % 2) WriteFile(t.dev / egm, "");
      break;
    }
    case 6: {  // /dev/vfio nodes: files, directories or nothing
      const std::string group = std::to_string(40 + in.Pick(4));
      if (in.Byte() % 2) {
        WriteFile(t.dev / "vfio" / group, "");
      } else {
        fs::create_directories(t.dev / "vfio" / group, ignored);
      }
      WriteFile(t.dev / "vfio/vfio", "");
      break;
    }
    default:  // a bus entry that is a file, or a link that goes nowhere
      fs::create_directories(t.sys / "bus/pci/devices", ignored);
      fs::remove(t.sys / "bus/pci/devices" / bdf, ignored);
      if (in.Byte() % 2) {
        WriteFile(t.sys / "bus/pci/devices" / bdf, Content(in));
      } else {
        Link(t.sys / "bus/pci/devices" / bdf, LinkTarget(t, in));
      }
      break;
  }
}

void CheckServed(const Tree& t, const gfp::plugin::core::NodeInventory& inventory) {
  (void)gfp::plugin::core::CheckOneFabricMode(inventory);
  (void)gfp::plugin::core::InventoryCommand(inventory, 1);
  (void)inventory.FabricGpuBdfs();
  std::vector<gfp::adapters::host::PciDevice> known;
  for (const auto& resource : inventory.resources) {
    for (const auto& served : resource.devices) {
      if (served.mdev) {
        (void)gfp::adapters::host::CheckMdevUnchanged(t.sys, *served.mdev);
        const std::vector<std::string> uuids = {served.mdev->uuid};
        (void)gfp::adapters::host::MdevContainerDeviceSpecs(t.sys, t.dev, uuids);
      }
      if (served.vf) (void)gfp::adapters::host::CheckVfUnchanged(t.sys, *served.vf);
      if (served.pci) {
        (void)gfp::adapters::host::CheckDeviceUnchanged(t.sys, *served.pci);
        (void)gfp::adapters::host::CheckVfioGroupNode(t.dev, served.pci->iommu_group);
        known.push_back(*served.pci);
      }
    }
  }
  for (const auto& d : known) {
    const std::vector<std::string> requested = {d.bdf};
    (void)gfp::adapters::host::ContainerDeviceSpecs(known, requested, false);
    (void)gfp::adapters::host::ContainerDeviceSpecs(known, requested, true);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static gfp::fuzz::ScratchDir scratch("sysfs");
  static const gfp::adapters::host::PciIds pci_ids;
  Tree t{scratch.path() / "node", scratch.path() / "node/sys", scratch.path() / "node/dev"};
  std::error_code ignored;
  fs::remove_all(t.root, ignored);
  fs::create_directories(t.sys / "bus/pci/devices", ignored);
  fs::create_directories(t.dev, ignored);
  gfp::fuzz::ByteReader in(data, size);
  for (int op = 0; op < 64 && !in.empty(); ++op) RunOp(t, in);

  for (const char* bdf : kBdfs) {
    (void)gfp::adapters::host::ReadDeviceIdentity(t.sys, bdf);
  }
  (void)gfp::adapters::host::DetectIommufd(t.dev);
  auto inventory = gfp::plugin::core::ScanNode(t.sys, t.dev, pci_ids);
  if (inventory.ok()) CheckServed(t, *inventory);
  return 0;
}
