#include "sim/demo/dra_day.h"

#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/journal_command.h"
#include "common/strings.h"
#include "sim/demo/demo_script.h"
#include "sim/world/claim_scheduler.h"

namespace gfp::simdemo {
namespace {

using Json = nlohmann::json;
using simworld::ProcessWorld;

constexpr const char* kNode = "demo-hgx-h100";
constexpr const char* kNamespace = "vms";

std::vector<std::string> DeviceNames(const std::vector<kubelet::DraDeviceAnswer>& devices) {
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.device_name);
  return names;
}

// How many times the plugin made Fabric Manager do `function` successfully.
Result<int> FmCalls(ProcessWorld& w, const std::string& function) {
  GFP_ASSIGN_OR_RETURN(auto calls, w.fabric().CallLog());
  int n = 0;
  for (const auto& c : calls) n += c.function == function && c.code == 0;
  return n;
}

// The one slice of this node: its devices, owner and partition attributes as the day prints them.
Status CheckSlice(ProcessWorld& w, bool print) {
  const auto slices = w.api().Slices();
  if (slices.size() != 1) return Internal(std::to_string(slices.size()) + " slices, not 1");
  const Json& slice = slices[0];
  const Json& devices = slice["spec"]["devices"];
  if (devices.size() != w.node().gpus.size()) {
    return Internal("the slice has " + std::to_string(devices.size()) + " devices, the node " +
                    std::to_string(w.node().gpus.size()) + " GPUs");
  }
  if (slice["metadata"]["ownerReferences"][0]["uid"] != w.dra_parts().node_uid) {
    return Internal("the slice is not owned by the Node");
  }
  std::map<int, std::set<std::int64_t>> offered;  // size -> partition ids
  for (const Json& device : devices) {
    for (int size : {1, 2, 4, 8}) {
      const std::string key = "partition" + std::to_string(size);
      if (!device["attributes"].contains(key)) {
        return Internal(device["name"].get<std::string>() + " has no attribute " + key);
      }
      offered[size].insert(device["attributes"][key]["int"].get<std::int64_t>());
    }
  }
  if (!print) return Status::Ok();
  std::cout << "    slice " << slice["metadata"]["name"].get<std::string>() << " (generation "
            << slice["spec"]["pool"]["generation"] << "): " << devices.size() << " devices, "
            << devices[0]["name"].get<std::string>() << " …\n    partitions offered:";
  for (const auto& [size, ids] : offered) {
    std::vector<std::string> names;
    for (auto id : ids) names.push_back(std::to_string(id));
    std::cout << " partition" << size << " {" << Join(names) << "}";
  }
  std::cout << "\n";
  return Status::Ok();
}

// A VM's claim as the stand-in scheduler allocated it and the plugin prepared it.
struct VmClaim {
  Json claim;
  std::vector<std::string> devices;  // as Prepare answered
  sm::PartitionId partition = 0;
  kubelet::DraClaim ref() const {
    return {claim["metadata"]["uid"], claim["metadata"]["namespace"], claim["metadata"]["name"]};
  }
  std::string uid() const { return claim["metadata"]["uid"]; }
};

// The VMs of the day: a claim allocated by the scheduler, prepared by kubelet, then deleted.
class DraVms {
 public:
  explicit DraVms(ProcessWorld& world) : w_(world), scheduler_(world.setup().dra_driver, kNode) {}

  Status Admit(const std::string& vm, std::size_t gpus);
  Status RepeatPrepares();
  Status Remove(const std::string& vm);
  Status StillActive();

 private:
  Result<sm::PartitionId> JournaledPartition(const std::string& uid, bool prepared) const;
  std::vector<std::filesystem::path> Files(const VmClaim& c) const;

  ProcessWorld& w_;
  simworld::ClaimScheduler scheduler_;
  std::map<std::string, VmClaim> vms_;
};

Result<sm::PartitionId> DraVms::JournaledPartition(const std::string& uid, bool prepared) const {
  GFP_ASSIGN_OR_RETURN(sm::State state, w_.JournalState());
  for (const auto& [id, a] : state.allocations) {
    if (a.claim && a.claim->uid == uid && a.partition && a.claim->prepared == prepared) {
      return *a.partition;
    }
  }
  return NotFound("the journal has no " + std::string(prepared ? "prepared" : "live") + " claim " +
                  uid + " holding a partition");
}

// The claim's CDI spec and its device metadata folder (SPEC §11).
std::vector<std::filesystem::path> DraVms::Files(const VmClaim& c) const {
  const std::string driver = w_.setup().dra_driver;
  return {w_.setup().cdi_dir() / (driver + "_" + c.uid() + ".json"),
          w_.setup().kubelet_plugins_dir() / driver / "dra-device-metadata" / c.uid()};
}

Status DraVms::Admit(const std::string& vm, std::size_t gpus) {
  simworld::ClaimRequest request;
  request.namespace_name = kNamespace;
  request.name = vm + "-gpus";
  request.gpus = gpus;
  request.pod = "virt-launcher-" + vm;
  request.pod_claim_name = "gpus";
  GFP_ASSIGN_OR_RETURN(Json allocated, scheduler_.Allocate(request, w_.api().Slices()));
  GFP_ASSIGN_OR_RETURN(Json stored, w_.api().PutClaim(allocated));
  VmClaim c{stored, {}, 0};
  const Json& first = stored["status"]["allocation"]["devices"]["results"][0];
  const auto offered = w_.api().Slices()[0]["spec"]["devices"];
  std::int64_t chosen = -1;
  for (const Json& d : offered) {
    if (d["name"] == first["device"])
      chosen = d["attributes"]["partition" + std::to_string(gpus)]["int"];
  }
  std::cout << "    the scheduler allocated " << kNamespace << "/" << request.name << " (fm-"
            << gpus << "gpu) in partition" << gpus << " = " << chosen << "\n";
  GFP_ASSIGN_OR_RETURN(const int activations, FmCalls(w_, "fmActivateFabricPartition"));
  auto outcome = w_.dra_kubelet().Prepare({c.ref()});
  if (!outcome.ok()) return Internal("NodePrepareResources: " + outcome.status.error_message());
  const auto& answer = outcome.response.at(c.uid());
  if (!answer.error.empty()) return Internal("NodePrepareResources refused: " + answer.error);
  if (answer.devices.size() != gpus) return Internal("Prepare answered the wrong device count");
  c.devices = DeviceNames(answer.devices);
  std::cout << "    NodePrepareResources: [" << Join(c.devices)
            << "]\n    CDI ids: " << Join(answer.devices[0].cdi_device_ids) << " …\n";
  GFP_ASSIGN_OR_RETURN(c.partition, JournaledPartition(c.uid(), true));
  if (static_cast<std::int64_t>(c.partition) != chosen) {
    return Internal("the plugin activated partition " + std::to_string(c.partition) +
                    ", not the one the scheduler chose");
  }
  GFP_ASSIGN_OR_RETURN(auto active, w_.FabricActive());
  if (!active.count(c.partition)) return Internal("the partition is not active in FM");
  GFP_ASSIGN_OR_RETURN(const int after, FmCalls(w_, "fmActivateFabricPartition"));
  if (after != activations + 1)
    return Internal("FM was asked to activate " + std::to_string(after - activations) + " times");
  for (const auto& f : Files(c)) {
    if (!std::filesystem::exists(f)) return NotFound(f.string() + " was not written");
  }
  std::cout << "    partition " << c.partition << " active in FM; " << Files(c)[0].string()
            << " written\n";
  vms_[vm] = std::move(c);
  return w_.FabricMatchesJournal();
}

// kubelet repeats Prepare for every claim (after a restart of either side): the same devices,
// no FM call.
Status DraVms::RepeatPrepares() {
  GFP_ASSIGN_OR_RETURN(const int activations, FmCalls(w_, "fmActivateFabricPartition"));
  GFP_ASSIGN_OR_RETURN(const int deactivations, FmCalls(w_, "fmDeactivateFabricPartition"));
  for (const auto& [vm, c] : vms_) {
    auto outcome = w_.dra_kubelet().Prepare({c.ref()});
    if (!outcome.ok()) return Internal("NodePrepareResources: " + outcome.status.error_message());
    const auto& answer = outcome.response.at(c.uid());
    if (!answer.error.empty()) return Internal(vm + "'s repeated Prepare refused: " + answer.error);
    if (DeviceNames(answer.devices) != c.devices) {
      return Internal(vm + "'s repeated Prepare answered other devices");
    }
    std::cout << "    " << vm << ": the same " << c.devices.size() << " devices again\n";
  }
  GFP_ASSIGN_OR_RETURN(const int a, FmCalls(w_, "fmActivateFabricPartition"));
  GFP_ASSIGN_OR_RETURN(const int d, FmCalls(w_, "fmDeactivateFabricPartition"));
  if (a != activations || d != deactivations) {
    return Internal("Fabric Manager was called again: " + std::to_string(a - activations) +
                    " activations, " + std::to_string(d - deactivations) + " deactivations");
  }
  std::cout << "    no partition activated or deactivated\n";
  return StillActive();
}

// Every VM's partition is active in FM, and FM agrees with the journal.
Status DraVms::StillActive() {
  GFP_ASSIGN_OR_RETURN(auto active, w_.FabricActive());
  for (const auto& [vm, c] : vms_) {
    if (!active.count(c.partition)) return Internal(vm + "'s partition is not active in FM");
  }
  return w_.FabricMatchesJournal();
}

// The VM is deleted, then its claim; kubelet unprepares it.
Status DraVms::Remove(const std::string& vm) {
  const VmClaim c = vms_.at(vm);
  if (!w_.api().DeleteClaim(kNamespace, c.claim["metadata"]["name"])) {
    return NotFound("no claim for " + vm);
  }
  scheduler_.Release(c.claim);
  auto outcome = w_.dra_kubelet().Unprepare({c.ref()});
  if (!outcome.ok()) return Internal("NodeUnprepareResources: " + outcome.status.error_message());
  const auto& error = outcome.response.at(c.uid()).error;
  if (!error.empty()) return Internal("NodeUnprepareResources refused: " + error);
  GFP_ASSIGN_OR_RETURN(auto active, w_.FabricActive());
  if (active.count(c.partition))
    return Internal("partition " + std::to_string(c.partition) + " still active");
  for (const auto& f : Files(c)) {
    if (std::filesystem::exists(f)) return Internal(f.string() + " is still there");
  }
  std::cout << "    NodeUnprepareResources: partition " << c.partition
            << " deactivated, its CDI spec and metadata removed\n";
  vms_.erase(vm);
  return w_.FabricMatchesJournal();
}

Status CrashAndRestart(ProcessWorld& w, DraVms& vms) {
  GFP_RETURN_IF_ERROR(w.CrashPlugin());
  GFP_RETURN_IF_ERROR(w.StartPlugin());
  w.dra_kubelet().Forget();  // the plugin's sockets are new: kubelet registers it again
  GFP_RETURN_IF_ERROR(w.WaitDraRegisteredAndPublished());
  return vms.RepeatPrepares();
}

Status WipeSlice(ProcessWorld& w) {
  const auto before = std::chrono::steady_clock::now();
  if (w.api().WipeSlices(kNode) != 1) return Internal("there was no slice to wipe");
  GFP_RETURN_IF_ERROR(
      ProcessWorld::Eventually([&] { return CheckSlice(w, false); }, std::chrono::seconds(5)));
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - before)
                      .count();
  std::cout << "    recreated after " << ms << " ms\n";
  return CheckSlice(w, true);
}

Status RestartFabricManager(ProcessWorld& w, DraVms& vms) {
  GFP_ASSIGN_OR_RETURN(const int activations, FmCalls(w, "fmActivateFabricPartition"));
  GFP_RETURN_IF_ERROR(w.fabric().Restart(/*resiliency=*/true));
  GFP_RETURN_IF_ERROR(ProcessWorld::Eventually([&]() -> Status {
    GFP_ASSIGN_OR_RETURN(auto mode, w.fabric().GetMode());
    if (mode != fmsim::Mode::kRunning)
      return Unavailable("Fabric Manager still waits for its resync");
    return Status::Ok();
  }));
  GFP_RETURN_IF_ERROR(ProcessWorld::Eventually([&] { return vms.StillActive(); }));
  // The resync hands FM the whole active set: a partition left out and activated again later
  // would have been inactive for a while under a running VM.
  GFP_ASSIGN_OR_RETURN(const int after, FmCalls(w, "fmActivateFabricPartition"));
  if (after != activations) {
    return Internal("the resync left partitions out: " + std::to_string(after - activations) +
                    " activated again afterwards");
  }
  GFP_ASSIGN_OR_RETURN(auto active, w.FabricActive());
  std::vector<std::string> ids;
  for (auto id : active) ids.push_back(std::to_string(id));
  std::cout << "    Fabric Manager running again, resynced with partitions {" << Join(ids)
            << "} active, as the journal says\n";
  return Status::Ok();
}

void RunDay(Script& s, ProcessWorld& w, DraVms& vms) {
  s.Step("the plugin starts (serve --mode=dra), registers with kubelet and publishes its slice",
         [&] {
           GFP_RETURN_IF_ERROR(w.StartPlugin());
           GFP_RETURN_IF_ERROR(w.WaitDraRegisteredAndPublished());
           return CheckSlice(w, true);
         });
  s.Step("vm-a asks for 4 GPUs: the scheduler picks a free 4-GPU partition, kubelet prepares it",
         [&] { return vms.Admit("vm-a", 4); });
  s.Step("vm-b asks for 2 GPUs", [&] { return vms.Admit("vm-b", 2); });
  s.Step(
      "the plugin crashes (SIGKILL) and restarts; kubelet repeats Prepare: same answer, no FM call",
      [&] { return CrashAndRestart(w, vms); });
  s.Step("kubelet wipes the node's slices: the plugin recreates its slice within 5 s",
         [&] { return WipeSlice(w); });
  s.Step("Fabric Manager restarts in resiliency mode: the plugin hands it the active set",
         [&] { return RestartFabricManager(w, vms); });
  s.Step("vm-a is deleted: its claim is unprepared", [&] { return vms.Remove("vm-a"); });
  s.Step("vm-b is deleted", [&] { return vms.Remove("vm-b"); });
  s.Step("SIGTERM: the plugin stops cleanly", [&]() -> Status {
    GFP_ASSIGN_OR_RETURN(int code, w.StopPlugin());
    if (code != 0) return Internal("serve exited with code " + std::to_string(code));
    return Status::Ok();
  });
}

// `journal history --claim vms/vm-a-gpus` and `journal verify`; true when both succeed.
bool PrintJournal(const ProcessWorld& w) {
  cli::JournalQuery query;
  query.path = w.journal_path().string();
  query.claim = std::string(kNamespace) + "/vm-a-gpus";
  std::cout << "\njournal history --claim " << query.claim << " (" << query.path << "):\n";
  // Printed through a buffer so the day can check it: an unknown claim lists nothing, exit 0.
  std::ostringstream listing;
  std::streambuf* const out = std::cout.rdbuf(listing.rdbuf());
  const int history = cli::PrintHistory(query, true);
  std::cout.rdbuf(out);
  std::cout << listing.str();
  const bool complete = listing.str().find(" ClaimPrepared ") != std::string::npos &&
                        listing.str().find(" ClaimUnprepared ") != std::string::npos;
  if (!complete)
    std::cout << "FAILED: the claim's history lacks its ClaimPrepared or ClaimUnprepared\n";
  std::cout << "\n";
  const int verify = cli::VerifyJournal(query);
  return history == 0 && complete && verify == 0;
}

}  // namespace

int RunDraDay(const DemoFlags& flags) {
  simworld::ProcessWorldOptions options;
  options.dra = true;
  options.node_name = kNode;
  auto demo = MakeDemoWorld(flags, options,
                            "gpu-fabric-plugin demo --mode=dra: a day on a simulated HGX H100 node "
                            "(8 GPUs, NVSwitch), partitions claimed through DRA");
  if (!demo.ok()) {
    std::cerr << "error: " << demo.status().message() << "\n";
    return 1;
  }
  ProcessWorld& w = *demo->world;
  std::cout << "  API server: " << w.api().url() << " (fake, HTTPS)\n\n";
  Script s(w);
  DraVms vms(w);
  RunDay(s, w, vms);
  const bool journal_ok = PrintJournal(w);
  return FinishDemo(*demo, flags, !s.failed() && journal_ok);
}

}  // namespace gfp::simdemo
