#include "cli/serve_preflight.h"

#include <system_error>

#include "adapters/fm/fm_address.h"
#include "adapters/host/file_reading.h"
#include "common/text_escape.h"
#include "plugin/labels/node_labels_file.h"
#include "plugin/labels/not_the_journal.h"

namespace gfp::cli {
namespace {

std::string Flag(const std::string& name, const std::filesystem::path& value) {
  return "--" + name + "=" + EscapeAndTruncate(value.string(), 300);
}

Status CheckRegularFileFlag(const std::string& name, const std::filesystem::path& value) {
  Status status = adapters::host::CheckIsRegularFile(value);
  if (status.ok()) return status;
  return Status(status.code(), Flag(name, value) + " " + status.message());
}

Status CheckDirectoryFlag(const std::string& name, const std::filesystem::path& value) {
  Status status = adapters::host::CheckIsDirectory(value);
  if (status.ok()) return status;
  return Status(status.code(), Flag(name, value) + " " + status.message());
}

// The journal may not exist yet (it is created, with missing parent folders); what exists of
// the path must allow that: the file itself regular, the nearest existing ancestor a folder.
Status CheckJournalFlag(const std::filesystem::path& journal) {
  if (adapters::host::CheckIsRegularFile(journal).code() != ErrorCode::kNotFound) {
    return CheckRegularFileFlag("journal", journal);
  }
  std::error_code ignored;
  auto parent = std::filesystem::absolute(journal, ignored).parent_path();
  while (true) {
    Status status = adapters::host::CheckIsDirectory(parent);
    if (status.ok()) return status;
    if (status.code() != ErrorCode::kNotFound) {
      return Status(status.code(), Flag("journal", journal) + ": " +
                                       EscapeAndTruncate(parent.string(), 300) + " " +
                                       status.message());
    }
    const auto up = parent.parent_path();
    if (up == parent || up.empty()) return Status::Ok();
    parent = up;
  }
}

Status CheckFabricManagerFlags(const plugin::ServeConfig& config) {
  if (auto address = adapters::fm::ParseFmAddress(config.fm_address); !address.ok()) {
    return address.status().WithContext("--fm-address");
  }
  GFP_RETURN_IF_ERROR(CheckRegularFileFlag("pci-module-mapping", config.pci_module_mapping));
  // A bare name is searched by the dynamic loader; only a path can be checked here.
  if (config.fm_library.find('/') != std::string::npos) {
    GFP_RETURN_IF_ERROR(CheckRegularFileFlag("fm-library", config.fm_library));
  }
  return Status::Ok();
}

// SPEC §8.2: the labels count Fabric Manager partitions; the path as
// plugin::labels::CheckNodeLabelsPath.
Status CheckNodeLabelsFileFlag(const plugin::ServeConfig& config) {
  const std::string flag = Flag("node-labels-file", config.node_labels_file);
  if (!config.fabric_manager) {
    return InvalidArgument(flag +
                           " needs --fabric-manager: the labels count Fabric Manager "
                           "partitions, and there are none without it");
  }
  Status status = plugin::labels::CheckNotAJournalFile(config.node_labels_file, config.journal);
  if (status.ok()) status = plugin::labels::CheckNodeLabelsPath(config.node_labels_file);
  if (status.ok()) return status;
  const bool colon = status.message().rfind(':', 0) == 0;
  return Status(status.code(), flag + (colon ? "" : " ") + status.message());
}

}  // namespace

Status CheckServeConfig(const plugin::ServeConfig& config) {
  GFP_RETURN_IF_ERROR(CheckDirectoryFlag("sysfs-root", config.sysfs_root));
  GFP_RETURN_IF_ERROR(CheckDirectoryFlag("dev-root", config.dev_root));
  GFP_RETURN_IF_ERROR(CheckJournalFlag(config.journal));
  if (!config.pci_ids.empty()) GFP_RETURN_IF_ERROR(CheckRegularFileFlag("pci-ids", config.pci_ids));
  if (config.fabric_manager) GFP_RETURN_IF_ERROR(CheckFabricManagerFlags(config));
  if (!config.node_labels_file.empty()) GFP_RETURN_IF_ERROR(CheckNodeLabelsFileFlag(config));
  return Status::Ok();
}

}  // namespace gfp::cli
