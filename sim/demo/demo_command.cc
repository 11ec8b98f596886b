#include "sim/demo/demo_command.h"

#include <iostream>
#include <memory>

#include "adapters/kubelet/grpc_lifetime.h"
#include "cli/journal_command.h"
#include "common/strings.h"
#include "sim/demo/demo_script.h"
#include "sim/demo/dra_day.h"
#include "sim/world/process_world.h"

namespace gfp::simdemo {
namespace {

using simworld::ProcessWorld;

// The VMs of the day: admitted through the fake kubelet, then deleted.
class DemoVms {
 public:
  explicit DemoVms(ProcessWorld& world) : w_(world) {}

  // kubelet admits the VM's pod: the plugin grants `gpus` GPUs forming one partition, and the
  // pod is then seen through PodResources.
  Status Admit(const std::string& vm, int gpus) {
    auto pod =
        w_.kubelet().AdmitPod("vms", "virt-launcher-" + vm, {{"compute", gpus}}, w_.resource());
    if (!pod.ok())
      return Internal("kubelet could not admit " + vm + ": " + pod.status.error_message());
    const auto& container = pod.response.containers.at(0);
    devices_[vm] = container.device_ids;
    const auto& envs = container.allocate_response.envs();
    const auto env = envs.find("PCI_RESOURCE_NVIDIA_COM_GH100_H100_SXM5_80GB");
    if (env == envs.end() || env->second != Join(container.device_ids)) {
      return Internal("KubeVirt's environment variable is missing or wrong");
    }
    GFP_ASSIGN_OR_RETURN(sm::PartitionId pid, w_.PartitionHolding(container.device_ids));
    partition_[vm] = pid;
    std::cout << "    " << vm << " got [" << Join(container.device_ids) << "] = partition " << pid
              << "\n";
    return ProcessWorld::Eventually([&]() -> Status { return PodBound(vm); });
  }

  // The VM's pod is deleted: its partition is released after the grace period.
  Status Remove(const std::string& vm) {
    if (!w_.kubelet().DeletePod("vms", "virt-launcher-" + vm)) return NotFound("no pod for " + vm);
    const sm::PartitionId pid = partition_.at(vm);
    GFP_RETURN_IF_ERROR(ProcessWorld::Eventually([&]() -> Status {
      GFP_ASSIGN_OR_RETURN(auto fm, w_.FabricActive());
      if (fm.count(pid)) return Unavailable("partition " + std::to_string(pid) + " still active");
      return Status::Ok();
    }));
    std::cout << "    partition " << pid << " released after the grace period\n";
    // FM changes before the plugin journals the outcome: the journal may lag by a commit.
    return ProcessWorld::Eventually([&] { return w_.FabricMatchesJournal(); });
  }

  // Each of `vms` still holds the partition of its devices.
  Status StillHeld(std::initializer_list<const char*> vms) {
    for (const char* vm : vms) GFP_RETURN_IF_ERROR(w_.PartitionHolding(devices_[vm]).status());
    return Status::Ok();
  }

  // How many times the plugin asked Fabric Manager to deactivate a partition.
  Result<int> Deactivations() {
    GFP_ASSIGN_OR_RETURN(auto calls, w_.fabric().CallLog());
    int n = 0;
    for (const auto& c : calls) n += c.function == "fmDeactivateFabricPartition";
    return n;
  }

 private:
  Status PodBound(const std::string& vm) {
    GFP_ASSIGN_OR_RETURN(sm::State state, w_.JournalState());
    for (const auto& [id, a] : state.allocations) {
      if (a.pod_name == "virt-launcher-" + vm && a.status == sm::AllocationStatus::kBound) {
        return Status::Ok();
      }
    }
    return Unavailable(vm + "'s pod has not been seen through PodResources yet");
  }

  ProcessWorld& w_;
  std::map<std::string, std::vector<std::string>> devices_;
  std::map<std::string, sm::PartitionId> partition_;
};

Status CrashAndRestart(ProcessWorld& w, DemoVms& vms) {
  GFP_ASSIGN_OR_RETURN(const int before, vms.Deactivations());
  GFP_RETURN_IF_ERROR(w.CrashPlugin());
  GFP_RETURN_IF_ERROR(w.StartPlugin());
  GFP_RETURN_IF_ERROR(w.WaitRegisteredAndHealthy(2));
  GFP_RETURN_IF_ERROR(vms.StillHeld({"vm-a", "vm-b", "vm-c"}));
  GFP_ASSIGN_OR_RETURN(int after, vms.Deactivations());
  if (after != before) return Internal("a partition was deactivated");
  return w.FabricMatchesJournal();
}

Status RestartFabricManager(ProcessWorld& w, DemoVms& vms) {
  GFP_RETURN_IF_ERROR(w.fabric().Restart(/*resiliency=*/true));
  GFP_RETURN_IF_ERROR(ProcessWorld::Eventually([&]() -> Status {
    GFP_ASSIGN_OR_RETURN(auto mode, w.fabric().GetMode());
    if (mode != fmsim::Mode::kRunning)
      return Unavailable("Fabric Manager still waits for its resync");
    return Status::Ok();
  }));
  GFP_RETURN_IF_ERROR(ProcessWorld::Eventually([&] { return w.FabricMatchesJournal(); }));
  return vms.StillHeld({"vm-b", "vm-c"});
}

Status RefuseGpusOfNoPartition(ProcessWorld& w) {
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
}

// The day, step by step; the script stops at the first step that misbehaves.
void RunDay(Script& s, ProcessWorld& w, DemoVms& vms) {
  s.Step("the plugin starts (serve, Fabric Manager on) and registers with kubelet", [&] {
    GFP_RETURN_IF_ERROR(w.StartPlugin());
    return w.WaitRegisteredAndHealthy(1);
  });
  s.Step("vm-a asks for 2 GPUs: they form one partition, active before the VM starts",
         [&] { return vms.Admit("vm-a", 2); });
  s.Step("vm-b asks for 4 GPUs", [&] { return vms.Admit("vm-b", 4); });
  s.Step("vm-c asks for 1 GPU", [&] { return vms.Admit("vm-c", 1); });
  s.Step("the plugin crashes (SIGKILL) and restarts; no running VM loses its partition",
         [&] { return CrashAndRestart(w, vms); });
  s.Step("vm-a is deleted: its partition is released once its devices are unused",
         [&] { return vms.Remove("vm-a"); });
  s.Step("Fabric Manager restarts in resiliency mode: the plugin hands it the active set",
         [&] { return RestartFabricManager(w, vms); });
  s.Step("kubelet restarts (sockets wiped): the plugin notices and registers again", [&] {
    const int before = w.kubelet().Resource(w.resource())->registrations;
    GFP_RETURN_IF_ERROR(w.kubelet().Restart());
    return w.WaitRegisteredAndHealthy(before + 1);
  });
  s.Step("vm-b and vm-c are deleted: both partitions are released", [&] {
    GFP_RETURN_IF_ERROR(vms.Remove("vm-b"));
    return vms.Remove("vm-c");
  });
  s.Step("vm-d asks for all 8 GPUs", [&] { return vms.Admit("vm-d", 8); });
  s.Step("a request for GPUs that form no partition is refused; nothing is activated",
         [&] { return RefuseGpusOfNoPartition(w); });
  s.Step("vm-d is deleted", [&] { return vms.Remove("vm-d"); });
  s.Step("SIGTERM: the plugin stops cleanly", [&]() -> Status {
    GFP_ASSIGN_OR_RETURN(int code, w.StopPlugin());
    if (code != 0) return Internal("serve exited with code " + std::to_string(code));
    return Status::Ok();
  });
}

// The journal the day left: its history, the final state and a verification. True when all
// three succeed.
bool PrintJournal(const ProcessWorld& w) {
  cli::JournalQuery query;
  query.path = w.journal_path().string();
  std::cout << "\njournal history (" << query.path << "):\n";
  const int history = cli::PrintHistory(query, false);
  std::cout << "\nfinal state:\n";
  const int state = cli::PrintState(query);
  std::cout << "\n";
  const int verify = cli::VerifyJournal(query);
  return history == 0 && state == 0 && verify == 0;
}

}  // namespace

int RunDemo(const DemoFlags& flags) {
  adapters::kubelet::KeepGrpcInitialized();
  if (flags.mode == "dra") return RunDraDay(flags);
  auto demo = MakeDemoWorld(
      flags, {}, "gpu-fabric-plugin demo: a day on a simulated HGX H100 node (8 GPUs, NVSwitch)");
  if (!demo.ok()) {
    std::cerr << "error: " << demo.status().message() << "\n";
    return 1;
  }
  ProcessWorld& w = *demo->world;
  Script s(w);
  DemoVms vms(w);
  RunDay(s, w, vms);
  const bool journal_ok = PrintJournal(w);
  return FinishDemo(*demo, flags, !s.failed() && journal_ok);
}

}  // namespace gfp::simdemo
