#include "sim/world/serve_setup.h"

#include <algorithm>
#include <utility>

#include "cli/serve_command.h"

namespace gfp::simworld {
namespace {

std::string Millis(std::chrono::milliseconds duration) {
  return std::to_string(duration.count()) + "ms";
}

}  // namespace

std::vector<std::string> ServeArgs(const ServeSetup& setup, const sim::FakeNode& node,
                                   const std::map<std::string, std::string>& overrides) {
  std::vector<std::pair<std::string, std::string>> flags = {
      {"--fabric-manager", setup.fabric_manager ? "true" : "false"},
      {"--fm-address", setup.fm_address},
      // serve's default when the world has no library to load (the core's FM is in memory).
      {"--fm-library", setup.fm_library.empty() ? "<unset>" : setup.fm_library.string()},
      {"--pci-module-mapping", node.module_mapping_file.string()},
      {"--sysfs-root", node.sysfs_root.string()},
      {"--dev-root", node.dev_root.string()},
      {"--device-plugin-dir", setup.device_plugin_dir().string()},
      {"--pod-resources-socket", setup.pod_resources_socket().string()},
      {"--journal", setup.journal().string()},
      {"--pci-ids", node.pci_ids_file.string()},
      {"--reconcile-interval", Millis(setup.reconcile_interval)},
      {"--release-grace", Millis(setup.release_grace)},
      {"--log-level", setup.log_level},
  };
  if (setup.dra) {
    flags.insert(flags.end(), {{"--mode", "dra"},
                               {"--kubeconfig", setup.kubeconfig.string()},
                               {"--dra-driver-name", setup.dra_driver},
                               {"--kubelet-registry-dir", setup.kubelet_registry_dir().string()},
                               {"--kubelet-plugins-dir", setup.kubelet_plugins_dir().string()},
                               {"--cdi-dir", setup.cdi_dir().string()}});
  }
  for (const auto& flag : overrides) {  // not a structured binding: clang 14 cannot capture one
    auto it = std::find_if(flags.begin(), flags.end(),
                           [&](const auto& f) { return f.first == flag.first; });
    if (it == flags.end()) {
      flags.emplace_back(flag);
    } else {
      it->second = flag.second;
    }
  }
  std::vector<std::string> args = {"serve"};
  for (const auto& [name, value] : flags) {
    if (value != "<unset>") args.push_back(name + "=" + value);
  }
  return args;
}

Result<plugin::ServeConfig> ServeConfigFor(const ServeSetup& setup, const sim::FakeNode& node,
                                           const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> args = ServeArgs(setup, node, overrides);
  args.erase(args.begin());  // "serve"
  return cli::ParseServeArgs(args);
}

std::map<std::string, std::string> ServeEnv(const ServeSetup& setup, const std::string& node_name) {
  return {{"NVFM_SIM_STATE", setup.fm_state().string()}, {"NODE_NAME", node_name}};
}

}  // namespace gfp::simworld
