// gfp-image-world: the simulated node scripts/test-image.sh runs the container image against, as
// one standalone program (the tests and the demo use the same parts in-process):
//  - the fake sysfs and /dev trees of an HGX H100 (sim/node), moved to where the script's
//    simulated host keeps /sys and /dev, and FM's module mapping file where the host's FM has it;
//  - the simulated Fabric Manager's state file (sim/fm; the plugin's container loads
//    libnvfm-sim.so, which reads and writes it);
//  - the fake kubelet (sim/kubelet) on the device-plugin and PodResources sockets, real gRPC.
// Then it plays kubelet: waits for the plugin's registration and a healthy device list, admits a
// pod of --gpus GPUs (GetPreferredAllocation, Allocate, PreStartContainer as kubelet would), and
// waits until the simulated FM shows the partition active. Every step is appended to --status as
// one line, `<step> ok|failed <details>`, for the script to read. It then serves kubelet until
// SIGTERM/SIGINT, and records FM's active partitions once more before it exits (`final`).
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sim/fm/fm_sim_control.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"

namespace {

namespace fs = std::filesystem;
using gfp::Status;

struct Flags {
  fs::path sysfs, dev, module_mapping, fm_state, device_plugin_dir, pod_resources_socket, status;
  int gpus = 2;
  int timeout_s = 180;
};

class StatusFile {
 public:
  explicit StatusFile(fs::path path) : path_(std::move(path)) {}
  void Write(const std::string& step, bool ok, const std::string& details) const {
    std::ofstream out(path_, std::ios::app);
    out << step << (ok ? " ok " : " failed ") << details << '\n';
    std::cout << "gfp-image-world: " << step << (ok ? " ok " : " failed ") << details << std::endl;
  }

 private:
  fs::path path_;
};

std::string Join(const std::vector<std::string>& items, const char* sep = ",") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

std::string Ids(const std::vector<std::uint32_t>& ids) {
  std::vector<std::string> text;
  for (auto id : ids) text.push_back(std::to_string(id));
  return Join(text);
}

// Moves `from` to `to` (same filesystem), creating `to`'s parents and replacing an empty folder.
Status MoveInto(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (fs::is_directory(to, ec) && fs::is_empty(to, ec)) fs::remove(to, ec);
  fs::rename(from, to, ec);
  if (ec)
    return gfp::Internal("cannot move " + from.string() + " to " + to.string() + ": " +
                         ec.message());
  return Status::Ok();
}

Status WriteClass(const gfp::sim::FakeNode& node, const std::string& bdf, const char* pci_class) {
  const fs::path path = node.DeviceDir(bdf) / "class";
  std::ofstream out(path);
  out << pci_class << '\n';
  if (!out.flush()) return gfp::Internal("cannot write " + path.string());
  return Status::Ok();
}

// The node tree where the simulated host has /sys, /dev and FM's module mapping.
gfp::Result<gfp::sim::FakeNode> BuildNode(const Flags& flags) {
  const fs::path scratch = flags.status.parent_path() / ".node-build";
  gfp::sim::FakeNodeSpec spec;
  spec.preset = gfp::sim::NodePreset::kHgxH100;
  GFP_ASSIGN_OR_RETURN(gfp::sim::FakeNode node, gfp::sim::BuildFakeNode(scratch, spec));
  // The PCI class, which sim/node does not write (serve does not read it) and the init container's
  // wait-for-vfio.sh does: 3D controller for the GPUs, bridge (other) for the NVSwitches.
  for (const auto& gpu : node.gpus) GFP_RETURN_IF_ERROR(WriteClass(node, gpu.bdf, "0x030200"));
  for (const auto& nvswitch : node.nvswitches) {
    GFP_RETURN_IF_ERROR(WriteClass(node, nvswitch.bdf, "0x068000"));
  }
  GFP_RETURN_IF_ERROR(MoveInto(node.sysfs_root, flags.sysfs));
  GFP_RETURN_IF_ERROR(MoveInto(node.dev_root, flags.dev));
  GFP_RETURN_IF_ERROR(MoveInto(node.module_mapping_file, flags.module_mapping));
  // A host's /sys has fs/cgroup, where the container runtime mounts the container's cgroups
  // inside the pod's /sys (runc cannot create it on the read-only bind mount).
  std::error_code ec;
  fs::create_directories(flags.sysfs / "fs" / "cgroup", ec);
  if (ec) return gfp::Internal("cannot create fs/cgroup in " + flags.sysfs.string());
  node.sysfs_root = flags.sysfs;
  node.dev_root = flags.dev;
  node.module_mapping_file = flags.module_mapping;
  return node;
}

int Run(const Flags& flags) {
  const StatusFile status(flags.status);
  const auto timeout = std::chrono::seconds(flags.timeout_s);

  // SIGTERM/SIGINT are waited for with sigwait; blocked before any thread starts.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto node = BuildNode(flags);
  if (!node.ok()) {
    status.Write("world", false, node.status().message());
    return 1;
  }
  auto fabric = gfp::fmsim::FmSimControl::Create(flags.fm_state.string(), "h100");
  if (!fabric.ok()) {
    status.Write("world", false, fabric.status().message());
    return 1;
  }
  gfp::kubelet::FakeKubeletOptions options;
  options.device_plugin_dir = flags.device_plugin_dir;
  options.pod_resources_socket = flags.pod_resources_socket;
  gfp::kubelet::FakeKubelet kubelet(options);
  if (Status started = kubelet.Start(); !started.ok()) {
    status.Write("world", false, "the fake kubelet: " + started.message());
    return 1;
  }
  status.Write("world", true,
               std::to_string(node->gpus.size()) + " GPUs (HGX H100), FM table h100, kubelet at " +
                   kubelet.kubelet_socket().string());

  // Registration: the first successful Register, then a full, healthy device list.
  std::string resource;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (resource.empty() && std::chrono::steady_clock::now() < deadline) {
    for (const auto& attempt : kubelet.RegistrationLog()) {
      if (attempt.status.ok()) resource = attempt.request.resource_name();
    }
    if (resource.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (resource.empty()) {
    status.Write("registration", false,
                 "no successful Register within " + std::to_string(flags.timeout_s) + "s");
    return 1;
  }
  const std::size_t want = node->gpus.size();
  const bool healthy = kubelet.WaitForDevices(
      resource,
      [&](const std::vector<v1beta1::Device>& devices) {
        if (devices.size() != want) return false;
        for (const auto& d : devices) {
          if (d.health() != "Healthy") return false;
        }
        return true;
      },
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                            std::chrono::steady_clock::now()));
  auto snapshot = kubelet.Resource(resource);
  status.Write("registration", healthy,
               resource + " endpoint " + (snapshot ? snapshot->endpoint : "?") + ", " +
                   std::to_string(snapshot ? snapshot->devices.size() : 0) + " devices" +
                   (healthy ? ", all Healthy" : ", not all Healthy"));
  if (!healthy) return 1;

  // A VM's pod of --gpus GPUs, admitted as kubelet admits it.
  auto admitted =
      kubelet.AdmitPod("vms", "virt-launcher-image-test", {{"compute", flags.gpus}}, resource);
  if (!admitted.ok()) {
    status.Write("allocate", false, "AdmitPod: " + admitted.status.error_message());
    return 1;
  }
  const auto& container = admitted.response.containers.at(0);
  std::vector<std::string> env, specs;
  for (const auto& [key, value] : container.allocate_response.envs())
    env.push_back(key + "=" + value);
  for (const auto& spec : container.allocate_response.devices())
    specs.push_back(spec.container_path());
  const std::string bdfs = Join(container.device_ids);
  bool env_ok = false;
  for (const auto& [key, value] : container.allocate_response.envs()) {
    if (key.rfind("PCI_RESOURCE_NVIDIA_COM_", 0) == 0 && value == bdfs) env_ok = true;
  }
  status.Write(
      "allocate", env_ok && !specs.empty(),
      "devices " + bdfs + "; env " + Join(env, " ") + "; device specs " + Join(specs, " "));
  if (!env_ok) return 1;

  // The partition of those GPUs, active in the simulated FM (the plugin activates it before the
  // VM starts: by the end of Allocate/PreStart).
  std::set<std::uint32_t> modules;
  for (const auto& bdf : container.device_ids) {
    if (const auto* gpu = node->FindGpu(bdf)) modules.insert(gpu->module_id);
  }
  std::vector<std::uint32_t> active;
  const auto fm_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < fm_deadline) {
    auto now_active = fabric->ActivePartitions();
    if (now_active.ok() && !now_active->empty()) {
      active = *now_active;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string activations;
  if (auto calls = fabric->CallLog(); calls.ok()) {
    for (const auto& call : *calls) {
      if (call.function.find("Activate") != std::string::npos) {
        activations += (activations.empty() ? "" : "; ") + call.function + "(" + call.args +
                       ") = " + std::to_string(call.code);
      }
    }
  }
  std::vector<std::string> module_text;
  for (auto m : modules) module_text.push_back(std::to_string(m));
  status.Write("fm-active", active.size() == 1,
               "active partitions [" + Ids(active) + "] for modules " + Join(module_text) +
                   "; FM calls: " + activations);
  status.Write("serving", true, "until SIGTERM");

  int received = 0;
  sigwait(&stop_signals, &received);
  auto final_active = fabric->ActivePartitions();
  status.Write("final", final_active.ok(),
               final_active.ok() ? "active partitions [" + Ids(*final_active) + "]"
                                 : final_active.status().message());
  kubelet.Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gfp-image-world: the simulated node scripts/test-image.sh runs the image against"};
  Flags flags;
  app.add_option("--sysfs", flags.sysfs, "where the node's sysfs tree goes (the host's /sys)")
      ->required();
  app.add_option("--dev", flags.dev, "where its /dev tree goes")->required();
  app.add_option("--module-mapping", flags.module_mapping, "where FM's module mapping goes")
      ->required();
  app.add_option("--fm-state", flags.fm_state, "the simulated FM's state file (NVFM_SIM_STATE)")
      ->required();
  app.add_option("--device-plugin-dir", flags.device_plugin_dir, "kubelet's device-plugin folder")
      ->required();
  app.add_option("--pod-resources-socket", flags.pod_resources_socket,
                 "kubelet's PodResources socket")
      ->required();
  app.add_option("--status", flags.status, "the file every step is appended to")->required();
  app.add_option("--gpus", flags.gpus, "GPUs of the VM admitted");
  app.add_option("--timeout", flags.timeout_s, "seconds to wait for the plugin's registration");
  CLI11_PARSE(app, argc, argv);
  return Run(flags);
}
