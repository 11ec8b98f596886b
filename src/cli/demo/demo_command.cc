#include "cli/demo/demo_command.h"

#include <unistd.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>

#include "adapters/kubelet/grpc_lifetime.h"
#include "cli/demo/demo_world.h"
#include "cli/demo/sim_library.h"
#include "cli/journal_command.h"
#include "common/strings.h"

namespace gfp::cli {
namespace {

struct DemoFlags {
  std::string dir;
  std::string fm_library;
  bool keep = false;
};

// Runs the day's steps in order, stopping at the first that misbehaves.
class Script {
 public:
  explicit Script(DemoWorld& world) : world_(world) {}

  bool Step(const std::string& what, const std::function<Status()>& body) {
    if (failed_) return false;
    ++number_;
    const auto started = std::chrono::steady_clock::now();
    Status status = body();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    std::cout << std::setw(2) << number_ << ". " << what << " ... "
              << (status.ok() ? "ok" : "FAILED") << " (" << ms << " ms)\n";
    if (!status.ok()) {
      std::cout << "    " << status.message() << "\n    serve's log: " << world_.log_path().string()
                << "\n";
      failed_ = true;
    }
    std::cout.flush();
    return status.ok();
  }
  bool failed() const { return failed_; }

 private:
  DemoWorld& world_;
  int number_ = 0;
  bool failed_ = false;
};

int RunDemo(const DemoFlags& flags) {
  kubelet::KeepGrpcInitialized();
  // Before anything is created: without the library there is no demo.
  auto library = FindSimLibrary(flags.fm_library, process::SelfExecutable(), GFP_SIM_FM_LIBRARY);
  if (!library.ok()) {
    std::cerr << "error: " << library.status().message() << "\n";
    return 1;
  }
  std::filesystem::path dir = flags.dir;
  if (dir.empty()) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "gpu-fabric-demo-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      std::cerr << "error: cannot create a temporary directory\n";
      return 1;
    }
    dir = pattern;
  }
  DemoOptions options;
  options.dir = dir;
  options.fm_library = *library;
  std::cout << "gpu-fabric-plugin demo: a day on a simulated HGX H100 node (8 GPUs, NVSwitch)\n"
            << "  world:      " << dir.string() << "\n"
            << "  FM library: " << options.fm_library.string() << " (simulated Fabric Manager)\n\n";
  auto created = DemoWorld::Create(options);
  if (!created.ok()) {
    std::cerr << "error: " << created.status().message() << "\n";
    return 1;
  }
  DemoWorld& w = **created;
  Script s(w);
  std::map<std::string, std::vector<std::string>> vm_devices;
  std::map<std::string, sm::PartitionId> vm_partition;

  auto admit = [&](const std::string& vm, int gpus) -> Status {
    auto pod =
        w.kubelet().AdmitPod("vms", "virt-launcher-" + vm, {{"compute", gpus}}, w.resource());
    if (!pod.ok())
      return Internal("kubelet could not admit " + vm + ": " + pod.status.error_message());
    const auto& container = pod.response.containers.at(0);
    vm_devices[vm] = container.device_ids;
    const auto& envs = container.allocate_response.envs();
    const auto env = envs.find("PCI_RESOURCE_NVIDIA_COM_GH100_H100_SXM5_80GB");
    if (env == envs.end() || env->second != Join(container.device_ids)) {
      return Internal("KubeVirt's environment variable is missing or wrong");
    }
    GFP_ASSIGN_OR_RETURN(sm::PartitionId pid, w.PartitionHolding(container.device_ids));
    vm_partition[vm] = pid;
    std::cout << "    " << vm << " got [" << Join(container.device_ids) << "] = partition " << pid
              << "\n";
    return DemoWorld::Eventually([&]() -> Status {
      GFP_ASSIGN_OR_RETURN(sm::State state, w.JournalState());
      for (const auto& [id, a] : state.allocations) {
        if (a.pod_name == "virt-launcher-" + vm && a.status == sm::AllocationStatus::kBound) {
          return Status::Ok();
        }
      }
      return Unavailable(vm + "'s pod has not been seen through PodResources yet");
    });
  };
  auto remove = [&](const std::string& vm) -> Status {
    if (!w.kubelet().DeletePod("vms", "virt-launcher-" + vm)) return NotFound("no pod for " + vm);
    const sm::PartitionId pid = vm_partition.at(vm);
    GFP_RETURN_IF_ERROR(DemoWorld::Eventually([&]() -> Status {
      GFP_ASSIGN_OR_RETURN(auto fm, w.FabricActive());
      if (fm.count(pid)) return Unavailable("partition " + std::to_string(pid) + " still active");
      return Status::Ok();
    }));
    std::cout << "    partition " << pid << " released after the grace period\n";
    // FM changes before the plugin journals the outcome: the journal may lag by a commit.
    return DemoWorld::Eventually([&] { return w.FabricMatchesJournal(); });
  };
  auto deactivations = [&]() -> Result<int> {
    GFP_ASSIGN_OR_RETURN(auto calls, w.fabric().CallLog());
    int n = 0;
    for (const auto& c : calls) n += c.function == "fmDeactivateFabricPartition";
    return n;
  };

  s.Step("the plugin starts (serve, Fabric Manager on) and registers with kubelet", [&] {
    GFP_RETURN_IF_ERROR(w.StartPlugin());
    return w.WaitRegisteredAndHealthy(1);
  });
  s.Step("vm-a asks for 2 GPUs: they form one partition, active before the VM starts",
         [&] { return admit("vm-a", 2); });
  s.Step("vm-b asks for 4 GPUs", [&] { return admit("vm-b", 4); });
  s.Step("vm-c asks for 1 GPU", [&] { return admit("vm-c", 1); });
  int deactivations_before_crash = 0;
  s.Step("the plugin crashes (SIGKILL) and restarts; no running VM loses its partition", [&] {
    GFP_ASSIGN_OR_RETURN(deactivations_before_crash, deactivations());
    GFP_RETURN_IF_ERROR(w.CrashPlugin());
    GFP_RETURN_IF_ERROR(w.StartPlugin());
    GFP_RETURN_IF_ERROR(w.WaitRegisteredAndHealthy(2));
    for (const auto& vm : {"vm-a", "vm-b", "vm-c"}) {
      GFP_RETURN_IF_ERROR(w.PartitionHolding(vm_devices[vm]).status());
    }
    GFP_ASSIGN_OR_RETURN(int after, deactivations());
    if (after != deactivations_before_crash) return Internal("a partition was deactivated");
    return w.FabricMatchesJournal();
  });
  s.Step("vm-a is deleted: its partition is released once its devices are unused",
         [&] { return remove("vm-a"); });
  s.Step("Fabric Manager restarts in resiliency mode: the plugin hands it the active set", [&] {
    GFP_RETURN_IF_ERROR(w.fabric().Restart(/*resiliency=*/true));
    GFP_RETURN_IF_ERROR(DemoWorld::Eventually([&]() -> Status {
      GFP_ASSIGN_OR_RETURN(auto mode, w.fabric().GetMode());
      if (mode != fmsim::Mode::kRunning)
        return Unavailable("Fabric Manager still waits for its resync");
      return Status::Ok();
    }));
    GFP_RETURN_IF_ERROR(DemoWorld::Eventually([&] { return w.FabricMatchesJournal(); }));
    for (const auto& vm : {"vm-b", "vm-c"}) {
      GFP_RETURN_IF_ERROR(w.PartitionHolding(vm_devices[vm]).status());
    }
    return Status::Ok();
  });
  s.Step("kubelet restarts (sockets wiped): the plugin notices and registers again", [&] {
    const int before = w.kubelet().Resource(w.resource())->registrations;
    GFP_RETURN_IF_ERROR(w.kubelet().Restart());
    return w.WaitRegisteredAndHealthy(before + 1);
  });
  s.Step("vm-b and vm-c are deleted: both partitions are released", [&] {
    GFP_RETURN_IF_ERROR(remove("vm-b"));
    return remove("vm-c");
  });
  s.Step("vm-d asks for all 8 GPUs", [&] { return admit("vm-d", 8); });
  s.Step("a request for GPUs that form no partition is refused; nothing is activated", [&] {
    v1beta1::AllocateRequest request;
    auto* c = request.add_container_requests();
    c->add_devices_ids(w.node().gpus[0].bdf);
    c->add_devices_ids(w.node().gpus[1].bdf);
    c->add_devices_ids(w.node().gpus[2].bdf);
    GFP_ASSIGN_OR_RETURN(auto before, w.FabricActive());
    auto outcome = w.kubelet().Allocate(w.resource(), request);
    if (outcome.ok()) return Internal("a 3-GPU request was granted");
    std::cout << "    refused: " << outcome.status.error_message() << "\n";
    GFP_ASSIGN_OR_RETURN(auto after, w.FabricActive());
    if (after != before) return Internal("Fabric Manager's active set changed");
    return Status::Ok();
  });
  s.Step("vm-d is deleted", [&] { return remove("vm-d"); });
  s.Step("SIGTERM: the plugin stops cleanly", [&]() -> Status {
    GFP_ASSIGN_OR_RETURN(int code, w.StopPlugin());
    if (code != 0) return Internal("serve exited with code " + std::to_string(code));
    return Status::Ok();
  });

  JournalQuery query;
  query.path = w.journal_path().string();
  std::cout << "\njournal history (" << query.path << "):\n";
  const int history = PrintHistory(query, false);
  std::cout << "\nfinal state:\n";
  const int state = PrintState(query);
  std::cout << "\n";
  const int verify = VerifyJournal(query);
  const bool ok = !s.failed() && history == 0 && state == 0 && verify == 0;
  std::cout << "\ndemo " << (ok ? "passed" : "FAILED") << "\n";
  w.kubelet().Stop();
  if (!flags.keep && flags.dir.empty() && ok) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  return ok ? 0 : 1;
}

}  // namespace

void AddDemoCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<DemoFlags>();
  CLI::App* demo = app.add_subcommand(
      "demo", "A simulated HGX H100 node's day: VMs come and go, crashes and restarts");
  demo->add_option("--dir", flags->dir, "where to build the simulated world (kept)");
  demo->add_option("--fm-library", flags->fm_library, "the simulated libnvfm to load");
  demo->add_flag("--keep", flags->keep, "keep the temporary world afterwards");
  demo->callback([flags, exit_code] { *exit_code = RunDemo(*flags); });
}

}  // namespace gfp::cli
