// The numbered-GPU partition picker (preferred_partition.cc) answers exactly what the first,
// string-based picker (preferred_reference.cc) answers: the same devices in the same order, or
// the same refusal word for word, on random nodes and requests:
//  - 1 to 80 GPUs (more than 64 needs a second word of bits), module ids with gaps, some
//    partitions naming modules the mapping does not have;
//  - whole GPUs and GPUs with VFs, NUMA nodes, degraded and unsupported partitions;
//  - kubelet's available list with duplicates, unknown ids and any order, must-include devices
//    (duplicated, unknown, two on one GPU), sizes that fit and sizes no partition has.
// A failure prints the node and the request; rerun with
//   RC_PARAMS="seed=<n>" build/tests/property/statemachine/statemachine_property_tests
//     --gtest_filter=PreferredProperty.*
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "preferred_reference.h"
#include "statemachine/preferred.h"

namespace gfp::sm {
namespace {

std::string GpuBdf(int n) {
  char bdf[16];
  std::snprintf(bdf, sizeof bdf, "0000:%02x:00.0", n);
  return bdf;
}

std::string VfBdf(int gpu, int vf) {
  char bdf[16];
  std::snprintf(bdf, sizeof bdf, "0000:%02x:00.%d", gpu, vf + 1);
  return bdf;
}

// A node: GPUs mapped to module ids, each a passthrough device or the parent of 1-3 VFs or
// mdevs (the picker is also asked directly about mdevs, which have no partitions).
struct Node {
  State state;
  std::vector<std::string> ids;  // every device id, plus some no state knows
};

Node GenNode() {
  Node node;
  State& s = node.state;
  s.fm_enabled = true;
  s.fm_connected = *rc::gen::arbitrary<bool>();
  const int gpus =
      *rc::gen::weightedOneOf<int>({{3, rc::gen::inRange(1, 17)}, {1, rc::gen::inRange(60, 81)}});
  const DeviceKind children = *rc::gen::weightedElement<DeviceKind>(
      {{4, DeviceKind::kPciPassthrough}, {2, DeviceKind::kVgpuVf}, {1, DeviceKind::kMdev}});
  ModuleId module = 0;
  std::vector<ModuleId> modules;  // every GPU's, mapped or not
  for (int g = 0; g < gpus; ++g) {
    module += static_cast<ModuleId>(*rc::gen::weightedElement<int>({{6, 1}, {1, 2}, {1, 5}}));
    modules.push_back(module);
    const std::string gpu = GpuBdf(g + 1);
    if (*rc::gen::weightedElement<bool>({{12, true}, {1, false}})) {  // else unmapped
      s.module_of_bdf.mutable_value()[gpu] = module;
      s.bdf_of_module.mutable_value()[module] = gpu;
    }
    const int numa = *rc::gen::inRange(0, 3);
    const int vfs = children == DeviceKind::kPciPassthrough ? 0 : *rc::gen::inRange(0, 4);
    DeviceState d;
    d.numa_node = numa;
    d.bdf = gpu;
    if (vfs == 0) s.devices.mutable_value()[gpu] = d;
    node.ids.push_back(gpu);
    for (int v = 0; v < vfs; ++v) {
      d.bdf = children == DeviceKind::kMdev ? "mdev-" + std::to_string(g) + "-" + std::to_string(v)
                                            : VfBdf(g + 1, v);
      d.kind = children;
      d.parent_bdf = gpu;
      d.numa_node =
          *rc::gen::weightedOneOf<int>({{1, rc::gen::just(numa)}, {1, rc::gen::inRange(0, 3)}});
      s.devices.mutable_value()[d.bdf] = d;
      node.ids.push_back(d.bdf);
    }
  }
  node.ids.push_back("0000:ff:00.0");  // a GPU no state knows
  node.ids.push_back("a-uuid-no-state-knows");
  const int partitions =
      *rc::gen::weightedOneOf<int>({{1, rc::gen::just(0)}, {10, rc::gen::inRange(1, 40)}});
  // Sometimes a table where every partition has the same few GPUs out of many, so that several
  // candidates share a GPU and the ranking (breaks, then NUMA) decides between them.
  const std::size_t overlapping = *rc::gen::weightedOneOf<std::size_t>(
      {{3, rc::gen::just<std::size_t>(0)},
       {1, rc::gen::inRange<std::size_t>(1, std::min<std::size_t>(modules.size(), 4) + 1)}});
  for (int p = 0; p < partitions; ++p) {
    PartitionState partition;
    partition.id = static_cast<PartitionId>(p * *rc::gen::inRange(1, 3));
    // Mostly aligned blocks of GPUs like the real tables, sometimes any set of module ids.
    const std::size_t size = std::size_t{1} << *rc::gen::inRange(0, 5);
    if (overlapping > 0) {
      for (std::size_t i : *rc::gen::unique<std::vector<std::size_t>>(
               overlapping, rc::gen::inRange<std::size_t>(0, modules.size()))) {
        partition.physical_ids.push_back(modules[i]);
      }
    } else if (size <= modules.size() && *rc::gen::weightedElement<bool>({{4, true}, {1, false}})) {
      const std::size_t blocks = modules.size() / size;  // the last one often: the high GPUs
      const std::size_t start = size * *rc::gen::weightedOneOf<std::size_t>(
                                           {{2, rc::gen::inRange<std::size_t>(0, blocks)},
                                            {1, rc::gen::just(blocks - 1)}});
      partition.physical_ids.assign(modules.begin() + static_cast<std::ptrdiff_t>(start),
                                    modules.begin() + static_cast<std::ptrdiff_t>(start + size));
    } else {
      const auto any =
          *rc::gen::unique<std::vector<ModuleId>>(rc::gen::inRange<ModuleId>(1, module + 3));
      partition.physical_ids.assign(any.begin(),
                                    any.begin() + std::min<std::size_t>(any.size(), 16));
    }
    partition.max_nvlinks = 12;
    partition.nvlinks_available = *rc::gen::weightedElement<std::uint32_t>({{8, 12}, {1, 6}});
    partition.unsupported = *rc::gen::weightedElement<bool>({{10, false}, {1, true}});
    s.partitions.mutable_value()[partition.id] = partition;
  }
  return node;
}

PreferredRequest GenRequest(const Node& node) {
  PreferredRequest request;
  for (const auto& id : node.ids) {  // most devices free, like a lightly used node
    if (*rc::gen::weightedElement<bool>({{12, true}, {1, false}})) request.available.push_back(id);
  }
  const auto pick = rc::gen::elementOf(node.ids);
  const auto extra = *rc::gen::resize(4, rc::gen::container<std::vector<std::string>>(pick));
  request.available.insert(request.available.end(), extra.begin(), extra.end());
  if (*rc::gen::arbitrary<bool>()) std::reverse(request.available.begin(), request.available.end());
  if (!request.available.empty()) {
    request.must_include = *rc::gen::weightedOneOf<std::vector<std::string>>(
        {{4, rc::gen::just(std::vector<std::string>{})},
         {2,
          rc::gen::container<std::vector<std::string>>(1, rc::gen::elementOf(request.available))},
         {2, rc::gen::resize(3, rc::gen::container<std::vector<std::string>>(
                                    rc::gen::elementOf(request.available)))},
         {1, rc::gen::resize(3, rc::gen::container<std::vector<std::string>>(pick))}});
  }
  std::vector<std::size_t> sizes{0, 3, 17};
  for (const auto& [id, p] : node.state.partitions.value()) sizes.push_back(p.physical_ids.size());
  request.size = *rc::gen::weightedOneOf<std::size_t>(
      {{8, rc::gen::elementOf(sizes)}, {1, rc::gen::inRange<std::size_t>(0, 18)}});
  return request;
}

std::string Describe(const Node& node, const PreferredRequest& request) {
  std::ostringstream os;
  for (const auto& [module, bdf] : node.state.bdf_of_module.value()) {
    os << "module " << module << " = " << bdf << "\n";
  }
  for (const auto& [id, d] : node.state.devices.value()) {
    os << "device " << id << " numa " << d.numa_node << " parent " << d.parent_bdf << "\n";
  }
  for (const auto& [id, p] : node.state.partitions.value()) {
    os << "partition " << id << (p.degraded() ? " (degraded):" : ":");
    for (ModuleId m : p.physical_ids) os << " " << m;
    os << "\n";
  }
  os << "size " << request.size << "\navailable:";
  for (const auto& id : request.available) os << " " << id;
  os << "\nmust:";
  for (const auto& id : request.must_include) os << " " << id;
  return os.str();
}

std::string AnswerText(const Result<std::vector<std::string>>& answer) {
  if (!answer.ok()) {
    return "refused (" + std::to_string(static_cast<int>(answer.status().code())) +
           "): " + answer.status().message();
  }
  std::string text = "answer:";
  for (const auto& id : *answer) text += " " + id;
  return text;
}

// Twenty requests per node: a hundred nodes (rapidcheck's default) get 2,000 questions.
RC_GTEST_PROP(PreferredProperty, NumberedPickerAnswersWhatTheStringPickerAnswers, ()) {
  const Node node = GenNode();
  bool answered = false;
  for (int ask = 0; ask < 20; ++ask) {
    const PreferredRequest request = GenRequest(node);
    const std::string fast = AnswerText(PreferredByPartition(node.state, request));
    const std::string reference = AnswerText(ReferencePreferredByPartition(node.state, request));
    if (fast != reference) {
      RC_FAIL(Describe(node, request) + "\nnumbered:  " + fast + "\nreference: " + reference);
    }
    answered = answered || fast.rfind("answer:", 0) == 0;
  }
  // Most nodes should see answers, not only refusals, or the ranking is barely exercised.
  RC_CLASSIFY(answered, "some request answered");
}

}  // namespace
}  // namespace gfp::sm
