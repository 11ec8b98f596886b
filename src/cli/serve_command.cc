#include "cli/serve_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <iostream>
#include <memory>
#include <vector>

#include "cli/flag_values.h"
#include "cli/log_setup.h"
#include "cli/serve_preflight.h"
#include "common/k8s_names.h"
#include "common/text_escape.h"
#include "plugin/dra_service.h"
#include "plugin/metrics/metrics_address.h"
#include "plugin/service.h"

namespace gfp::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

struct RawServeFlags {
  std::string fabric_manager = "false";
  std::string fm_address = "/run/nvidia-fabricmanager/fmpm.sock";
  std::string fm_library = "libnvfm.so.1";
  std::string pci_module_mapping = "/run/nvidia-fabricmanager/gpu-pci-module-mapping.json";
  std::string sysfs_root = "/sys";
  std::string dev_root = "/dev";
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string journal = "/var/lib/gpu-fabric-plugin/journal.db";
  std::string pci_ids;
  std::string reconcile_interval = "5s";
  std::string release_grace = "30s";
  std::string log_level = "info";
  std::string node_labels_file;
  std::string log_format = "text";
  std::string metrics_address;
  std::string mode = "device-plugin";
  std::string node_name;
  std::string kubeconfig;
  std::string dra_driver_name = "gpu-fabric-plugin.io";
  std::string kubelet_registry_dir = "/var/lib/kubelet/plugins_registry";
  std::string kubelet_plugins_dir = "/var/lib/kubelet/plugins";
  std::string cdi_dir = "/var/run/cdi";
};

// Beyond these a value is a typo, and large ones used to overflow into nonsense (issue 8).
constexpr std::chrono::milliseconds kMaxReconcileInterval = std::chrono::hours(24);
constexpr std::chrono::milliseconds kMaxReleaseGrace = std::chrono::hours(24 * 30);

// SPEC §11: the DRA flags; their names end up in socket paths, API paths and file names.
Status ToDraConfig(const RawServeFlags& raw, plugin::ServeConfig& c) {
  if (raw.mode != "device-plugin" && raw.mode != "dra") {
    return InvalidArgument("--mode=" + EscapeAndTruncate(raw.mode, 64) +
                           " is not a mode: device-plugin or dra");
  }
  c.dra_mode = raw.mode == "dra";
  c.kubeconfig = raw.kubeconfig;
  c.dra_driver_name = raw.dra_driver_name;
  c.kubelet_registry_dir = raw.kubelet_registry_dir;
  c.kubelet_plugins_dir = raw.kubelet_plugins_dir;
  c.cdi_dir = raw.cdi_dir;
  if (!c.dra_mode) return Status::Ok();
  if (c.node_name.empty()) {
    return InvalidArgument(
        "--mode=dra needs --node-name (or NODE_NAME): the node's name is its "
        "ResourceSlice pool");
  }
  if (std::string p = DnsSubdomainProblem(c.node_name); !p.empty()) {
    return InvalidArgument("--node-name=" + EscapeAndTruncate(c.node_name, 300) +
                           " is not a Kubernetes node name: it " + p);
  }
  if (std::string p = DnsSubdomainProblem(c.dra_driver_name, 63); !p.empty()) {
    return InvalidArgument("--dra-driver-name=" + EscapeAndTruncate(c.dra_driver_name, 300) +
                           " is not a DRA driver name (a DNS subdomain of at most 63 "
                           "characters): it " +
                           p);
  }
  return Status::Ok();
}

Result<plugin::ServeConfig> ToConfig(const RawServeFlags& raw) {
  plugin::ServeConfig c;
  GFP_ASSIGN_OR_RETURN(c.fabric_manager, ParseBoolFlag("fabric-manager", raw.fabric_manager));
  c.fm_address = raw.fm_address;
  c.fm_library = raw.fm_library;
  c.pci_module_mapping = raw.pci_module_mapping;
  c.sysfs_root = raw.sysfs_root;
  c.dev_root = raw.dev_root;
  c.device_plugin_dir = raw.device_plugin_dir;
  c.pod_resources_socket = raw.pod_resources_socket;
  c.journal = raw.journal;
  c.pci_ids = raw.pci_ids;
  GFP_ASSIGN_OR_RETURN(
      c.reconcile_interval,
      ParseDurationFlag("reconcile-interval", raw.reconcile_interval, kMaxReconcileInterval));
  GFP_ASSIGN_OR_RETURN(c.release_grace,
                       ParseDurationFlag("release-grace", raw.release_grace, kMaxReleaseGrace));
  if (c.reconcile_interval.count() == 0) {
    return InvalidArgument("--reconcile-interval must be greater than zero");
  }
  c.log_level = raw.log_level;
  c.node_labels_file = raw.node_labels_file;
  GFP_ASSIGN_OR_RETURN(const LogFormat log_format, ParseLogFormat(raw.log_format));
  c.log_format = log_format == LogFormat::kJson ? "json" : "text";
  if (!raw.metrics_address.empty()) {
    GFP_RETURN_IF_ERROR(plugin::metrics::ParseMetricsAddress(raw.metrics_address).status());
    c.metrics_address = raw.metrics_address;
  }
  c.node_name = raw.node_name;
  GFP_RETURN_IF_ERROR(ToDraConfig(raw, c));
  return c;
}

// A flag's environment variable set but empty is an error, unless the flag itself was given
// (the command line wins, SPEC §2.1; CLI11 ignores empty variables).
Status CheckEnvironment(const std::vector<const CLI::Option*>& options) {
  for (const CLI::Option* option : options) {
    if (option->count() > 0 || option->get_envname().empty()) continue;
    GFP_RETURN_IF_ERROR(
        CheckEnvironmentValueNotEmpty(option->get_single_name(), option->get_envname()));
  }
  return Status::Ok();
}

// Everything that can be checked without side effects, so a refused start creates nothing.
Result<plugin::ServeConfig> CheckedConfig(const RawServeFlags& raw,
                                          const std::vector<const CLI::Option*>& options) {
  GFP_RETURN_IF_ERROR(CheckEnvironment(options));
  GFP_ASSIGN_OR_RETURN(plugin::ServeConfig config, ToConfig(raw));
  GFP_RETURN_IF_ERROR(CheckServeConfig(config));
  return config;
}

// Creates and runs one mode's service: a failure to start or a failed stop is exit 1.
template <typename ModeService>
int RunService(const plugin::ServeConfig& config) {
  auto service = ModeService::Create(config, GFP_VERSION);
  if (!service.ok()) {
    spdlog::critical("cannot start: {}", service.status().message());
    return 1;
  }
  Status status = (*service)->Run(g_stop);
  if (!status.ok()) {
    spdlog::critical("{}", status.message());
    return 1;
  }
  spdlog::info("stopped cleanly");
  return 0;
}

int Serve(const RawServeFlags& raw, const std::vector<const CLI::Option*>& options) {
  // The log format first: every later line, start-up errors too, is in it.
  if (auto format = ParseLogFormat(raw.log_format); format.ok()) UseLogFormat(*format);
  auto config = CheckedConfig(raw, options);
  if (!config.ok()) {
    ReportStartupError(config.status().message());
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config->log_level));
  InstallSignalHandlers();
  if (config->dra_mode) return RunService<plugin::DraService>(*config);
  return RunService<plugin::Service>(*config);
}

// SPEC §2.1's flags of DRA mode (§11).
void AddDraFlags(CLI::App& serve, RawServeFlags& raw) {
  serve
      .add_option("--mode", raw.mode,
                  "device-plugin, or dra (a DRA kubelet plugin publishing ResourceSlices); one "
                  "node runs one mode")
      ->envname("GPU_FABRIC_MODE");
  serve
      .add_option("--node-name", raw.node_name,
                  "the Kubernetes node this runs on; required with --mode=dra")
      ->envname("NODE_NAME");
  serve
      .add_option("--kubeconfig", raw.kubeconfig,
                  "with --mode=dra: API server access (default: the pod's service account)")
      ->envname("KUBECONFIG");
  serve
      .add_option("--dra-driver-name", raw.dra_driver_name,
                  "with --mode=dra: the DRA driver name (a DNS subdomain of at most 63 characters)")
      ->envname("GPU_FABRIC_DRA_DRIVER");
  serve.add_option("--kubelet-registry-dir", raw.kubelet_registry_dir,
                   "with --mode=dra: where <driver>-reg.sock (plugin registration) is served");
  serve.add_option("--kubelet-plugins-dir", raw.kubelet_plugins_dir,
                   "with --mode=dra: <dir>/<driver>/dra.sock and the device metadata files");
  serve.add_option("--cdi-dir", raw.cdi_dir,
                   "with --mode=dra: where the CDI spec files of prepared claims are written");
}

// serve's flags (SPEC §2.1), bound to `raw`.
void AddServeFlags(CLI::App& serve_app, RawServeFlags& raw_flags) {
  CLI::App* serve = &serve_app;
  RawServeFlags* raw = &raw_flags;
  // --help prints every default (scripts/check-deploy.sh compares the manifests with them).
  serve->option_defaults()->always_capture_default();
  serve
      ->add_option("--fabric-manager", raw->fabric_manager,
                   "enable Fabric Manager partition management (1/0, true/false, t/f; default "
                   "false, a bare flag means true)")
      ->expected(0, 1)
      // CLI11 hands a bare flag the default string: keep it empty, so bare means true.
      ->default_str("")
      ->envname("ENABLE_FABRIC_MANAGER");
  serve
      ->add_option("--fm-address", raw->fm_address,
                   "FM SDK endpoint: /unix/socket/path or IPv4[:port] (default port 6666)")
      ->envname("FABRIC_MANAGER_ADDRESS");
  serve->add_option("--fm-library", raw->fm_library, "FM SDK shared library (dlopen)")
      ->envname("NVFM_LIBRARY_PATH");
  serve->add_option("--pci-module-mapping", raw->pci_module_mapping, "BDF -> GPU module id JSON")
      ->envname("GPU_PCI_MODULE_MAPPING_PATH");
  serve->add_option("--sysfs-root", raw->sysfs_root, "root of the sysfs tree to scan");
  serve->add_option("--dev-root", raw->dev_root, "where vfio/<group>, vfio/vfio, iommu are found");
  serve->add_option("--device-plugin-dir", raw->device_plugin_dir,
                    "holds kubelet.sock and our sockets");
  serve->add_option("--pod-resources-socket", raw->pod_resources_socket,
                    "kubelet PodResources API socket");
  serve->add_option("--journal", raw->journal, "the SQLite journal")->envname("GPU_FABRIC_JOURNAL");
  serve->add_option("--pci-ids", raw->pci_ids, "PCI names database (default: first existing)");
  serve->add_option("--reconcile-interval", raw->reconcile_interval,
                    "PodResources / FM reconciliation period (ms, s, m, h; at most 24h)");
  serve->add_option(
      "--release-grace", raw->release_grace,
      "how long devices must be unused before their partition is released (at most 720h)");
  serve->add_option("--log-level", raw->log_level, "trace, debug, info, warn, error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  serve
      ->add_option("--node-labels-file", raw->node_labels_file,
                   "NFD local feature file kept up to date with the free partitions (needs "
                   "--fabric-manager; default: off)")
      ->envname("GPU_FABRIC_NODE_LABELS_FILE");
  serve->add_option("--log-format", raw->log_format, "text or json (one JSON object per line)")
      ->envname("GPU_FABRIC_LOG_FORMAT");
  serve
      ->add_option("--metrics-address", raw->metrics_address,
                   "HOST:PORT or :PORT for /metrics, /healthz, /readyz (port 0: any free port)")
      ->envname("GPU_FABRIC_METRICS_ADDRESS");
  AddDraFlags(*serve, *raw);
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto raw = std::make_shared<RawServeFlags>();
  CLI::App* serve = app.add_subcommand("serve", "Run the node daemon (device plugin)");
  AddServeFlags(*serve, *raw);
  std::vector<const CLI::Option*> options;
  for (const CLI::Option* option : serve->get_options()) options.push_back(option);
  serve->callback([raw, options, exit_code] { *exit_code = Serve(*raw, options); });
}

Result<plugin::ServeConfig> ParseServeArgs(const std::vector<std::string>& args) {
  RawServeFlags raw;
  CLI::App app("gpu-fabric-plugin serve");
  AddServeFlags(app, raw);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 parses from the back
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return InvalidArgument("serve flags: " + std::string(e.what()));
  }
  std::vector<const CLI::Option*> options;
  for (const CLI::Option* option : app.get_options()) options.push_back(option);
  return CheckedConfig(raw, options);
}

}  // namespace gfp::cli
