#include "adapters/host/numa_attribute.h"

#include "adapters/host/file_reading.h"
#include "adapters/host/sysfs_attributes.h"

namespace gfp::adapters::host {
namespace {

constexpr std::size_t kMaxAttributeBytes = 4096;

}  // namespace

std::int64_t ReadNumaNodeOrZero(const std::filesystem::path& device_dir, const std::string& who,
                                std::vector<std::string>* warnings) {
  auto content = ReadWholeFile(device_dir / "numa_node", kMaxAttributeBytes);
  if (!content.ok()) {
    if (content.status().code() != ErrorCode::kNotFound) {
      warnings->push_back(who + ": cannot read numa_node: " + content.status().message() +
                          "; using NUMA node 0");
    }
    return 0;
  }
  if (auto numa = ParseNumaNodeAttribute(*content)) return *numa;
  warnings->push_back(who + ": numa_node " + QuoteAttribute(*content) +
                      " is not a NUMA node id (0.." + std::to_string(kMaxNumaNode) +
                      "); using NUMA node 0");
  return 0;
}

}  // namespace gfp::adapters::host
