#include "sim/world/world_parts.h"

#include <utility>

namespace gfp::simworld {

std::string NodeKind::Name() const {
  if (vgpu) return sim::VgpuNodePresetName(*vgpu);
  return sim::NodePresetName(preset);
}

const char* FmTableFor(sim::NodePreset preset) {
  switch (preset) {
    case sim::NodePreset::kHgxH100:
      return "h100";
    case sim::NodePreset::kHgxB200:
      return "b200";
    case sim::NodePreset::kHgxA100x16:
      return "a100";
  }
  return "h100";
}

const char* FmTableFor(const NodeKind& kind) {
  if (!kind.vgpu) return FmTableFor(kind.preset);
  switch (*kind.vgpu) {
    case sim::VgpuNodePreset::kMdevA100:
      return "a100";
    case sim::VgpuNodePreset::kVfH100:
    case sim::VgpuNodePreset::kGraceGh200:
      break;
  }
  return "h100";
}

Result<sim::FakeNode> BuildNode(const std::filesystem::path& dir, const NodeKind& kind) {
  if (kind.vgpu) return sim::BuildVgpuNode(dir / "node", {*kind.vgpu});
  sim::FakeNodeSpec spec;
  spec.preset = kind.preset;
  spec.with_iommufd = kind.with_iommufd;
  return sim::BuildFakeNode(dir / "node", spec);
}

Status ConfigureFabric(fmsim::FmSimControl& fm, const sim::FakeNode& node) {
  if (node.vgpu_preset != sim::VgpuNodePreset::kVfH100) return Status::Ok();
  GFP_RETURN_IF_ERROR(fm.SetFabricMode(fmsim::FabricMode::kVgpu));
  for (const auto& vf : node.vfs) {
    const sim::FakeGpu* parent = node.FindGpu(vf.parent_bdf);
    if (parent == nullptr) return Internal("VF " + vf.bdf + " has no parent GPU on the node");
    GFP_RETURN_IF_ERROR(fm.SetVfParent(vf.bdf, parent->module_id));
  }
  return Status::Ok();
}

kubelet::FakeKubeletOptions KubeletOptionsFor(const ServeSetup& setup) {
  kubelet::FakeKubeletOptions options;
  options.device_plugin_dir = setup.device_plugin_dir();
  options.pod_resources_socket = setup.pod_resources_socket();
  return options;
}

Result<WorldParts> AssembleWorld(const ServeSetup& setup, const NodeKind& kind,
                                 std::chrono::milliseconds kubelet_call_timeout) {
  std::error_code ec;
  std::filesystem::create_directories(setup.dir, ec);
  if (ec) return Internal("cannot create " + setup.dir.string() + ": " + ec.message());
  std::filesystem::create_directories(setup.pod_resources_socket().parent_path(), ec);
  if (ec) return Internal("cannot create " + setup.pod_resources_socket().parent_path().string());
  GFP_ASSIGN_OR_RETURN(sim::FakeNode node, BuildNode(setup.dir, kind));
  GFP_ASSIGN_OR_RETURN(fmsim::FmSimControl fabric,
                       fmsim::FmSimControl::Create(setup.fm_state().string(), FmTableFor(kind)));
  GFP_RETURN_IF_ERROR(ConfigureFabric(fabric, node));
  kubelet::FakeKubeletOptions options = KubeletOptionsFor(setup);
  options.call_timeout = kubelet_call_timeout;
  auto kubelet = std::make_unique<kubelet::FakeKubelet>(options);
  GFP_RETURN_IF_ERROR(kubelet->Start().WithContext("the fake kubelet"));
  return WorldParts{std::move(node), std::move(fabric), std::move(kubelet)};
}

}  // namespace gfp::simworld
