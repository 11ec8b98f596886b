// What kind of node a simulated world is, and the one place a kind becomes parts: the fake node
// tree, the table and mode its simulated Fabric Manager starts with, and the fake kubelet on the
// sockets serve_setup.h lays out. ProcessWorld, the integration fixture, the benchmarks and the
// deterministic world all assemble their node and FM here.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"
#include "sim/world/serve_setup.h"

namespace gfp::simworld {

struct NodeKind {
  sim::NodePreset preset = sim::NodePreset::kHgxH100;
  // A vGPU or Grace node instead of `preset`.
  std::optional<sim::VgpuNodePreset> vgpu;
  bool with_iommufd = false;  // the passthrough presets only

  // "HGX H100", "vGPU VF H100", ...: for a failure message or a trace.
  std::string Name() const;
};

// The simulated FM's partition table for a node ("h100", "a100", "b200"): the baseboard's.
const char* FmTableFor(sim::NodePreset preset);
const char* FmTableFor(const NodeKind& kind);

// The fake node tree of `kind` under `dir`/node.
Result<sim::FakeNode> BuildNode(const std::filesystem::path& dir, const NodeKind& kind);

// Fabric Manager as the node's host configures it: in FABRIC_MODE=2, with every VF's parent GPU
// known (as FM learns it from PCI), on an SR-IOV vGPU node; nothing to do on the others.
Status ConfigureFabric(fmsim::FmSimControl& fm, const sim::FakeNode& node);

// The fake kubelet on the sockets of `setup`.
kubelet::FakeKubeletOptions KubeletOptionsFor(const ServeSetup& setup);

// A world whose `serve` runs as a process: the node, the simulated FM over its state file
// (setup.fm_state()) configured for the node, and the fake kubelet, started.
struct WorldParts {
  sim::FakeNode node;
  fmsim::FmSimControl fabric;
  std::unique_ptr<kubelet::FakeKubelet> kubelet;
};
Result<WorldParts> AssembleWorld(const ServeSetup& setup, const NodeKind& kind,
                                 std::chrono::milliseconds kubelet_call_timeout);

}  // namespace gfp::simworld
