#include "plugin/labels/node_labels.h"

#include "statemachine/free_partitions.h"

namespace gfp::plugin::labels {

std::string FormatNodeLabels(const std::map<std::size_t, std::size_t>& free_by_size) {
  // Comment lines must not start with "# +": nfd-worker would read them as directives.
  std::string text =
      "# Written by gpu-fabric-plugin (--node-labels-file): free Fabric Manager partitions of\n"
      "# this node by size (GPU count). Node Feature Discovery publishes each line as the node\n"
      "# label feature.node.kubernetes.io/<name>. Replaced whenever a count changes; do not "
      "edit.\n";
  for (const auto& [size, count] : free_by_size) {
    text +=
        "gpu-fabric.free-partitions." + std::to_string(size) + "=" + std::to_string(count) + "\n";
  }
  text += "gpu-fabric.largest-free-partition=" +
          std::to_string(sm::LargestFreePartition(free_by_size)) + "\n";
  return text;
}

}  // namespace gfp::plugin::labels
