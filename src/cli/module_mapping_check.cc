#include "cli/module_mapping_check.h"

#include <map>
#include <set>

#include "adapters/host/file_reading.h"
#include "adapters/host/pci_discovery.h"
#include "adapters/mapping/module_mapping.h"
#include "cli/module_mapping_fm.h"
#include "common/text_escape.h"

namespace gfp::cli {
namespace {

// Every GPU on a VFIO driver needs an entry; every entry should name a PCI device that exists.
Status CheckAgainstSysfs(const adapters::mapping::ModuleMapping& mapping,
                         const std::filesystem::path& sysfs_root, const std::string& context,
                         MappingCheckReport* report) {
  auto discovery = adapters::host::DiscoverVfioDevices(sysfs_root);
  if (!discovery.ok()) {
    return discovery.status().WithContext("cannot scan sysfs " +
                                          EscapeControl(sysfs_root.string()));
  }
  for (const std::string& warning : discovery->warnings) report->notes.push_back(warning);
  std::set<std::string> on_vfio;
  for (const adapters::host::PciDevice& device : discovery->devices) {
    on_vfio.insert(device.bdf);
    if (!mapping.ModuleOf(device.bdf)) {
      report->problems.push_back(context + ": GPU " + device.bdf + " (on " + device.driver +
                                 " in sysfs) has no entry");
    }
  }
  if (on_vfio.empty()) {
    report->notes.push_back("no NVIDIA GPU bound to a VFIO driver under " +
                            EscapeControl(sysfs_root.string()) + "; only the entries were checked");
  }
  for (const auto& [bdf, module_id] : mapping.module_by_bdf) {
    if (on_vfio.count(bdf) != 0) continue;
    const std::string entry =
        context + ": entry " + bdf + " (module " + std::to_string(module_id) + ")";
    auto exists = adapters::host::PathExists(adapters::host::PciDevicePath(sysfs_root, bdf));
    if (!exists.ok()) return exists.status().WithContext("cannot check " + bdf + " in sysfs");
    if (*exists) {
      report->notes.push_back(entry + ": GPU is not on a VFIO driver; not handed to VMs now");
    } else {
      report->problems.push_back(entry + ": no such PCI device in sysfs");
    }
  }
  return Status::Ok();
}

// Every module of every supported partition is mapped; every entry's module is in FM's table;
// where FM reports bus ids, they agree with the file.
void CheckAgainstFm(const adapters::mapping::ModuleMapping& mapping,
                    const std::vector<adapters::fm::PartitionInfo>& partitions,
                    const std::string& context, MappingCheckReport* report) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> partitions_by_module;
  std::map<std::uint32_t, std::string> fm_bdf_by_module;
  for (const adapters::fm::PartitionInfo& partition : partitions) {
    for (std::uint32_t module_id : partition.physical_ids) {
      partitions_by_module[module_id].push_back(partition.id);
    }
    // A table without usable bus ids (H100 and later) is simply not compared.
    if (auto fm_mapping = MappingFromFmPartitions({partition}); fm_mapping.ok()) {
      for (const auto& [bdf, module_id] : *fm_mapping) fm_bdf_by_module[module_id] = bdf;
    }
  }
  for (const auto& [module_id, partition_ids] : partitions_by_module) {
    const auto bdf = mapping.BdfOf(module_id);
    if (!bdf) {
      report->problems.push_back(context + ": module " + std::to_string(module_id) +
                                 " (in Fabric Manager partitions " + JoinIds(partition_ids) +
                                 ") has no entry");
      continue;
    }
    const auto fm_bdf = fm_bdf_by_module.find(module_id);
    if (fm_bdf != fm_bdf_by_module.end() && fm_bdf->second != *bdf) {
      report->problems.push_back(context + ": module " + std::to_string(module_id) + " is GPU " +
                                 *bdf + " here but GPU " + fm_bdf->second +
                                 " in Fabric Manager's partition table");
    }
  }
  for (const auto& [bdf, module_id] : mapping.module_by_bdf) {
    if (partitions_by_module.count(module_id) == 0) {
      report->problems.push_back(context + ": entry " + bdf + " has module " +
                                 std::to_string(module_id) +
                                 ", which is in no Fabric Manager partition");
    }
  }
}

}  // namespace

Result<MappingCheckReport> CheckModuleMappingFile(
    const std::filesystem::path& mapping_file, const std::filesystem::path& sysfs_root,
    const std::optional<std::vector<adapters::fm::PartitionInfo>>& fm_partitions) {
  const std::string context = "module mapping " + EscapeControl(mapping_file.string());
  auto text =
      adapters::host::ReadWholeFile(mapping_file, adapters::mapping::kMaxModuleMappingFileBytes);
  if (!text.ok()) return text.status().WithContext(context + ": cannot read file");
  MappingCheckReport report;
  auto mapping = adapters::mapping::ParseModuleMapping(*text, mapping_file.string());
  if (!mapping.ok()) {
    report.problems.push_back(mapping.status().message());  // already names the file
    return report;
  }
  GFP_RETURN_IF_ERROR(CheckAgainstSysfs(*mapping, sysfs_root, context, &report));
  if (fm_partitions) CheckAgainstFm(*mapping, *fm_partitions, context, &report);
  report.summary = context + ": consistent: " + std::to_string(mapping->module_by_bdf.size()) +
                   " entries, checked against " + EscapeControl(sysfs_root.string()) +
                   (fm_partitions ? " and " + std::to_string(fm_partitions->size()) +
                                        " Fabric Manager partitions"
                                  : "");
  return report;
}

}  // namespace gfp::cli
