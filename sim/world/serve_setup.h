// How `serve` runs against a simulated world: the one place that maps the world's parts (a fake
// node tree, the simulated Fabric Manager, the fake kubelet's sockets, the journal) onto serve's
// command line. A world that runs `serve` as a process passes ServeArgs() as its argv; a world
// that runs the core in-process parses the same line with cli::ParseServeArgs (serve's own
// parser and start-up checks), so every world is configured as a real `serve` would be.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "plugin/serve_config.h"
#include "sim/node/fake_node.h"

namespace gfp::simworld {

// The FM address every world uses: a Unix socket path nothing listens on (the simulated FM
// needs no socket; the path only has to be well formed).
inline constexpr const char* kFmAddress = "/run/nvidia-fabricmanager/fmpm.sock";

struct ServeSetup {
  std::filesystem::path dir;  // the world's folder
  std::string fm_address = kFmAddress;
  bool fabric_manager = true;
  std::filesystem::path fm_library;  // libnvfm-sim.so; unused by an in-process world's core
  std::chrono::milliseconds reconcile_interval{5000};
  std::chrono::milliseconds release_grace{30000};
  std::string log_level = "info";

  // Where each part lives under `dir`.
  std::filesystem::path journal() const { return dir / "journal" / "journal.db"; }
  std::filesystem::path device_plugin_dir() const { return dir / "device-plugins"; }
  std::filesystem::path pod_resources_socket() const {
    return dir / "pod-resources" / "kubelet.sock";
  }
  std::filesystem::path fm_state() const {
    return fm_state_file.empty() ? dir / "fabric-manager.state" : fm_state_file;
  }
  std::filesystem::path fm_state_file;  // elsewhere than in `dir` (e.g. on tmpfs)

  // DRA mode (SPEC §11): serve --mode=dra against the world's fake API server (dra_parts.h).
  bool dra = false;
  std::string dra_driver = "gpu-fabric-plugin.io";
  std::filesystem::path kubeconfig;  // written by AssembleDraParts
  std::filesystem::path kubelet_registry_dir() const { return dir / "plugins_registry"; }
  std::filesystem::path kubelet_plugins_dir() const { return dir / "plugins"; }
  std::filesystem::path cdi_dir() const { return dir / "cdi"; }
};

// "serve --fabric-manager=true --fm-address=... ..." for `node` (argv without the program).
// `overrides` replaces or adds flags ("--name" -> value); the value "<unset>" drops the flag.
std::vector<std::string> ServeArgs(const ServeSetup& setup, const sim::FakeNode& node,
                                   const std::map<std::string, std::string>& overrides = {});

// What `serve ServeArgs(...)` would run with, through serve's own flag parser and start-up
// checks: for a world that runs the core or the service in-process.
Result<plugin::ServeConfig> ServeConfigFor(
    const ServeSetup& setup, const sim::FakeNode& node,
    const std::map<std::string, std::string>& overrides = {});

// The environment `serve` needs in a world: where the simulated FM keeps its state, the node.
std::map<std::string, std::string> ServeEnv(const ServeSetup& setup, const std::string& node_name);

}  // namespace gfp::simworld
