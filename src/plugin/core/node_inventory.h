// What this node has: every kubelet device the plugin serves, grouped into kubelet resources
// named like the Go plugin's (reference/upstream-behaviour.md §1.3, §1.4, §3.2):
//   - whole GPUs on a VFIO driver, one resource per PCI device id;
//   - mediated vGPUs (mdev), one resource per mdev type, identified by UUID;
//   - SR-IOV vGPU VFs on the nvidia driver, one resource per vGPU profile;
// and the Grace EGM devices that Allocate adds for complete GPU sets.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapters/host/egm_discovery.h"
#include "adapters/host/mdev_discovery.h"
#include "adapters/host/pci_device.h"
#include "adapters/host/pci_ids.h"
#include "adapters/host/vgpu_vf_discovery.h"
#include "adapters/kubelet_naming/resource_naming.h"
#include "common/status.h"
#include "statemachine/commands.h"

namespace gfp::plugin::core {

// One kubelet device.
struct ServedDevice {
  std::string id;  // the kubelet device id: a PCI address (GPU or VF), or an mdev's UUID
  sm::DeviceKind kind = sm::DeviceKind::kPciPassthrough;
  std::int64_t numa_node = 0;
  // The PCI function handed to the VM (GPU or VF): its group and cdev make the device specs.
  // Unset for an mdev.
  std::optional<adapters::host::PciDevice> pci;
  std::optional<adapters::host::MdevDevice> mdev;  // set for an mdev
  std::optional<adapters::host::VgpuVf> vf;        // set for a VF
  std::string parent_bdf;                          // the GPU of an mdev or a VF

  // The physical GPU behind the device (itself for a whole GPU).
  const std::string& gpu_bdf() const { return parent_bdf.empty() ? id : parent_bdf; }
};

struct ResourceDevices {
  adapters::kubelet_naming::ResourceNaming naming;
  sm::DeviceKind kind = sm::DeviceKind::kPciPassthrough;
  std::vector<ServedDevice> devices;  // sorted by id
};

struct NodeInventory {
  std::vector<ResourceDevices> resources;  // sorted by resource name
  // Every discovery's warnings (skipped functions, mdevs, VFs, EGMs), in discovery order.
  std::vector<std::string> warnings;
  adapters::host::EgmDiscovery egms;
  // The PCI functions served (GPUs and VFs), sorted by BDF: group siblings for device specs.
  std::vector<adapters::host::PciDevice> pci_functions;

  const ResourceDevices* FindResource(const std::string& resource_name) const;
  const ServedDevice* FindDevice(const std::string& id) const;
  // The physical GPUs whose module ids Fabric Manager needs: whole GPUs and the parents of VFs
  // (mdevs never take part in partitions), sorted, without repeats.
  std::vector<std::string> FabricGpuBdfs() const;
  bool Has(sm::DeviceKind kind) const;
};

// Scans sysfs (and <dev_root> for EGM nodes) and names every resource.
Result<NodeInventory> ScanNode(const std::filesystem::path& sysfs_root,
                               const std::filesystem::path& dev_root,
                               const adapters::host::PciIds& pci_ids);

// Builds the inventory from discovery results (ScanNode's second half, testable without sysfs).
// Fails when two resources would share a name (and so a socket).
Result<NodeInventory> MakeInventory(const adapters::host::PciDiscovery& passthrough,
                                    const adapters::host::VgpuVfDiscovery& vfs,
                                    const adapters::host::MdevDiscovery& mdevs,
                                    adapters::host::EgmDiscovery egms,
                                    const adapters::host::PciIds& pci_ids);

// Fabric Manager runs in one mode per node: FABRIC_MODE=1 activates whole GPUs, FABRIC_MODE=2
// activates vGPU VFs. An inventory with both cannot be served with Fabric Manager.
Status CheckOneFabricMode(const NodeInventory& inventory);

sm::ObserveInventory InventoryCommand(const NodeInventory& inventory, sm::Micros now);

// The kubelet resource of one mdev type (upstream-behaviour.md §1.4, §1.10): "nvidia.com/<type>",
// socket "kubevirt-<type>.sock", env key "MDEV_PCI_RESOURCE_NVIDIA_COM_<TYPE>".
adapters::kubelet_naming::ResourceNaming MdevResourceNaming(const std::string& type_name);
// The kubelet resource of one vGPU VF profile (upstream-behaviour.md §3.2): "nvidia.com/<profile>",
// socket "kubevirt-<profile>.sock", env key "PCI_RESOURCE_NVIDIA_COM_<PROFILE>".
adapters::kubelet_naming::ResourceNaming VgpuVfResourceNaming(const std::string& profile);

}  // namespace gfp::plugin::core
