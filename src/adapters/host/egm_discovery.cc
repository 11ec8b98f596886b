#include "adapters/host/egm_discovery.h"

#include <algorithm>
#include <set>

#include "adapters/host/bdf.h"
#include "adapters/host/file_reading.h"
#include "adapters/host/sysfs_attributes.h"
#include "adapters/host/sysfs_links.h"
#include "common/text_escape.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
constexpr std::size_t kMaxAttributeBytes = 4096;

// The name becomes a /dev path: "egm" and digits only.
bool IsEgmName(const std::string& name) {
  return name.size() > 3 && name.rfind("egm", 0) == 0 &&
         std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> SplitWhitespace(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

Result<EgmDevice> InspectEgm(const fs::path& sysfs_root, const fs::path& dev_root,
                             const std::string& name) {
  const fs::path dir = sysfs_root / "class" / "egm" / name;
  GFP_RETURN_IF_ERROR(CheckResolvesInside(dir, sysfs_root));
  auto content = ReadWholeFile(dir / "gpu_devices", kMaxAttributeBytes);
  if (!content.ok()) return content.status().WithContext("cannot read gpu_devices");
  EgmDevice egm{name, {}, false};
  for (const std::string& word : SplitWhitespace(*content)) {
    auto bdf = NormalizeBdf(word);
    if (!bdf.ok()) {
      return InvalidArgument("gpu_devices entry " + QuoteAttribute(word) + " is not a PCI address");
    }
    egm.gpu_bdfs.push_back(*bdf);
  }
  if (egm.gpu_bdfs.empty()) return InvalidArgument("gpu_devices is empty");
  auto exists = PathExists(dev_root / name);
  egm.dev_node_exists = exists.ok() && *exists;
  return egm;
}

}  // namespace

Result<EgmDiscovery> DiscoverEgmDevices(const fs::path& sysfs_root, const fs::path& dev_root) {
  const fs::path class_dir = sysfs_root / "class" / "egm";
  EgmDiscovery result;
  auto names = ListDirectory(class_dir);
  if (!names.ok() && names.status().code() == ErrorCode::kNotFound) return result;
  if (!names.ok()) {
    return names.status().WithContext("EGM discovery: cannot list " +
                                      EscapeControl(class_dir.string()));
  }
  for (const std::string& name : *names) {
    if (!IsEgmName(name)) {
      result.warnings.push_back(EscapeAndTruncate(name, 64) + ": skipped: not an egmN device");
      continue;
    }
    auto egm = InspectEgm(sysfs_root, dev_root, name);
    if (!egm.ok()) {
      result.warnings.push_back(name + ": skipped: " + egm.status().message());
      continue;
    }
    result.devices.push_back(std::move(*egm));
  }
  return result;
}

std::vector<std::string> EgmDeviceNodesFor(std::span<const EgmDevice> egms,
                                           std::span<const std::string> requested_bdfs) {
  if (egms.empty()) return {};  // every Allocate asks; only Grace nodes have EGM devices
  std::set<std::string> requested;
  for (const std::string& bdf : requested_bdfs) {
    auto canonical = NormalizeBdf(bdf);
    if (canonical.ok()) requested.insert(*canonical);
  }
  std::vector<std::string> paths;
  for (const EgmDevice& egm : egms) {
    if (!egm.dev_node_exists || egm.gpu_bdfs.empty()) continue;
    const bool all_requested =
        std::all_of(egm.gpu_bdfs.begin(), egm.gpu_bdfs.end(),
                    [&](const std::string& g) { return requested.count(g); });
    if (all_requested) paths.push_back("/dev/" + egm.name);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace gfp::adapters::host
