// Everything `serve` is configured with (SPEC §2.1), already parsed and validated.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace gfp::plugin {

struct ServeConfig {
  bool fabric_manager = false;
  std::string fm_address = "/run/nvidia-fabricmanager/fmpm.sock";
  std::string fm_library = "libnvfm.so.1";
  std::filesystem::path pci_module_mapping =
      "/run/nvidia-fabricmanager/gpu-pci-module-mapping.json";
  std::filesystem::path sysfs_root = "/sys";
  std::filesystem::path dev_root = "/dev";
  std::filesystem::path device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::filesystem::path pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::filesystem::path journal = "/var/lib/gpu-fabric-plugin/journal.db";
  std::filesystem::path pci_ids;  // empty: the first existing default
  std::chrono::milliseconds reconcile_interval{5000};
  std::chrono::milliseconds release_grace{30000};
  std::string log_level = "info";
  std::filesystem::path node_labels_file;  // empty: off (SPEC §8.2)
  std::string log_format = "text";         // text or json (common/log_format.h)
  std::string metrics_address;             // empty: no metrics endpoint (SPEC §8.1)

  // Not flags: tuning the tests and the demo use.
  std::chrono::milliseconds fm_call_deadline{4000};  // PreStart makes up to 4 calls: < 30 s
  std::chrono::milliseconds health_recheck_interval{10000};
  std::chrono::milliseconds kubelet_check_interval{500};
  std::string node_name;  // --node-name [NODE_NAME]; required with --mode=dra

  // SPEC §11: DRA mode instead of the device plugin (one mode per node).
  bool dra_mode = false;             // --mode=dra
  std::filesystem::path kubeconfig;  // empty: the pod's service account
  std::string dra_driver_name = "gpu-fabric-plugin.io";
  std::filesystem::path kubelet_registry_dir = "/var/lib/kubelet/plugins_registry";
  std::filesystem::path kubelet_plugins_dir = "/var/lib/kubelet/plugins";
  std::filesystem::path cdi_dir = "/var/run/cdi";
};

}  // namespace gfp::plugin
