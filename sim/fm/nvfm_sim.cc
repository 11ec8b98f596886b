// libnvfm-sim.so: a simulated Fabric Manager with the exact C ABI of libnvfm.so.1 (the 11
// functions of reference/fabric-manager.md §1), for tests and the demo. The daemon's state lives
// in the file named by $NVFM_SIM_STATE (see sim_state.h); what is per process here is only what
// is per process in the real client library: whether fmLibInit ran, and the open handles. With
// $NVFM_SIM_PRIVATE=1 (benchmarks) the state is read from the file once and then kept in the
// process's memory instead (PrivateCall).
//
// Check order per call follows the real 535 library (§5): not initialised -> UNINITIALIZED;
// NULL arguments -> BADPARAM; struct version -> VERSION_MISMATCH; unknown or stale handle ->
// CONNECTION_NOT_VALID; then injected faults; then the fabric mode (FABRIC_MODE=1 shared
// NVSwitch or 2 vGPU: each refuses the other's activation call with NOT_SUPPORTED); then the
// daemon's mode and partition semantics.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "adapters/fm/fm_abi.h"
#include "sim/fm/fabric_model.h"
#include "sim/fm/sim_state.h"
#include "sim/fm/sim_tables.h"

namespace gfp::fmsim {
namespace {

namespace abi = gfp::adapters::fm::abi;

struct Connection {
  std::uint64_t generation = 0;
};

struct ProcessState {
  std::mutex mu;
  bool initialised = false;
  std::map<const void*, std::unique_ptr<Connection>> connections;
};

// Never destroyed: a caller's worker thread may still be inside the library at exit.
ProcessState& Process() {
  static auto* process = new ProcessState();
  return *process;
}

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Hex(unsigned value) {
  char buffer[16];
  std::snprintf(buffer, sizeof(buffer), "0x%08X", value);
  return buffer;
}

// What one SDK call sees while it holds the state lock: the daemon's side (FabricCall) and this
// process's side (initialised, handles).
struct CallContext : FabricCall {
  ProcessState& process;

  CallContext(const char* name, SimState& sim_state, const SimTable& sim_table, ProcessState& p)
      : FabricCall{name, sim_state, sim_table, {}}, process(p) {}

  // NULL -> BADPARAM; unknown, stale or FM unreachable -> CONNECTION_NOT_VALID.
  int CheckHandle(abi::fmHandle_t handle) const {
    if (handle == nullptr) return abi::kBadParam;
    auto it = process.connections.find(handle);
    if (it == process.connections.end()) return abi::kConnectionNotValid;
    if (it->second->generation != state.generation || state.unreachable) {
      return abi::kConnectionNotValid;
    }
    return abi::kSuccess;
  }
};

// How long a call sleeps before it runs: latency plus any one-shot delay. A call with a one-shot
// delay counts as in flight (state field delayed_in_flight) until it returns.
struct Wait {
  int ms = 0;
  bool one_shot = false;
};

Wait TakeWait(const char* path, const char* function) {
  auto locked = LockedState::Acquire(path);
  if (!locked.ok()) return {};  // the real call reports the problem
  SimState& state = locked->state();
  Wait wait;
  if (auto it = state.latency_ms.find(function); it != state.latency_ms.end()) {
    wait.ms = it->second;
  } else if (auto all = state.latency_ms.find("*"); all != state.latency_ms.end()) {
    wait.ms = all->second;
  }
  if (auto it = state.delays.find(function); it != state.delays.end()) {
    wait.ms += it->second.ms;
    ConsumeOne(state.delays, it);
    state.delayed_pids.push_back(static_cast<int>(::getpid()));
    wait.one_shot = locked->Commit().ok();
  }
  return wait;
}

// True (and one use consumed) when this process must crash at `point` of `function`.
bool TakeCrash(SimState& state, const SimTable& table, const char* function, CrashPoint point) {
  FabricCall call{function, state, table, {}};
  return fmsim::TakeCrash(call, point, static_cast<int>(::getpid()));
}

// The process dies as on SIGKILL or power loss at this point: no destructors, no reply. What FM
// did so far (and the consumed fault) is written first, as the daemon would have it.
[[noreturn]] void CrashNow(LockedState& locked, const char* function, const char* when) {
  locked.Commit().IgnoreError();
  std::fprintf(stderr, "nvfm-sim: %s: the caller crashes %s the call (injected)\n", function, when);
  std::fflush(stderr);
  ::_exit(kCrashExitCode);
}

// Zero-latency mode ($NVFM_SIM_PRIVATE=1, for benchmarks: "FM with zero latency"): the state
// file is read at this process's first call and the state then lives in its memory, one per
// state path. No lock, no rewrite, no call log; the control API's faults, lost replies, caller
// crashes, delays and latency do not apply (those read from the file are dropped).
bool PrivateMode() {
  const char* value = std::getenv("NVFM_SIM_PRIVATE");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

struct PrivateStates {
  std::mutex mu;
  std::map<std::string, SimState> by_path;
};

// Never destroyed, like Process().
PrivateStates& Privates() {
  static auto* privates = new PrivateStates();
  return *privates;
}

// The private state of `path`, read from the file at the first call (nullptr: it cannot be).
SimState* PrivateState(PrivateStates& privates, const char* function, const std::string& path) {
  if (auto it = privates.by_path.find(path); it != privates.by_path.end()) return &it->second;
  auto locked = LockedState::Acquire(path);
  if (!locked.ok()) {
    std::fprintf(stderr, "nvfm-sim: %s: %s\n", function, locked.status().message().c_str());
    return nullptr;
  }
  SimState state = std::move(locked->state());
  state.faults.clear();
  state.latency_ms.clear();
  state.lost_replies.clear();
  state.crashes.clear();
  state.delays.clear();
  return &privates.by_path.emplace(path, std::move(state)).first->second;
}

int PrivateCall(const char* function, const char* path,
                const std::function<int(CallContext&)>& body) {
  PrivateStates& privates = Privates();
  std::lock_guard private_lock(privates.mu);
  SimState* state = PrivateState(privates, function, path);
  if (state == nullptr) return abi::kGenericError;
  auto table = FindTable(state->table);
  if (!table.ok()) {
    std::fprintf(stderr, "nvfm-sim: %s: %s\n", function, table.status().message().c_str());
    return abi::kGenericError;
  }
  ProcessState& process = Process();
  std::lock_guard process_lock(process.mu);
  CallContext context(function, *state, **table, process);
  return body(context);
}

// Runs one SDK call: latency, then `body` under the state lock, then the call log. The log
// records what FM did (a lost reply is logged with the code FM meant to return, and a note).
int Call(const char* function, const std::string& args,
         const std::function<int(CallContext&)>& body, std::vector<std::string> vfs = {}) {
  const char* path = std::getenv("NVFM_SIM_STATE");
  if (path == nullptr || *path == '\0') {
    std::fprintf(stderr, "nvfm-sim: %s: NVFM_SIM_STATE is not set\n", function);
    return abi::kGenericError;
  }
  if (PrivateMode()) return PrivateCall(function, path, body);
  // Injected latency is slept without the lock so the control API and other callers go on.
  const Wait wait = TakeWait(path, function);
  if (wait.ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(wait.ms));
  auto locked = LockedState::Acquire(path);
  if (!locked.ok()) {
    std::fprintf(stderr, "nvfm-sim: %s: %s\n", function, locked.status().message().c_str());
    return abi::kGenericError;
  }
  if (wait.one_shot) {
    auto& pids = locked->state().delayed_pids;
    auto mine = std::find(pids.begin(), pids.end(), static_cast<int>(::getpid()));
    if (mine != pids.end()) pids.erase(mine);
  }
  auto table = FindTable(locked->state().table);
  if (!table.ok()) {
    std::fprintf(stderr, "nvfm-sim: %s: %s\n", function, table.status().message().c_str());
    locked->Commit().IgnoreError();
    return abi::kGenericError;
  }
  if (TakeCrash(locked->state(), **table, function, CrashPoint::kBefore)) {
    CrashNow(*locked, function, "before FM carries out");
  }
  ProcessState& process = Process();
  std::lock_guard process_lock(process.mu);
  CallContext context(function, locked->state(), **table, process);
  const int done = body(context);
  const int code = LoseReplyIfArmed(context, done);
  const bool crash_after = TakeCrash(locked->state(), **table, function, CrashPoint::kAfter);
  if (crash_after)
    context.note += (context.note.empty() ? "" : "; ") + std::string("caller crashed");
  locked->AppendCall(CallRecord{function, args, done, NowMs(), static_cast<int>(::getpid()),
                                std::move(vfs), std::move(context.note)});
  if (crash_after) CrashNow(*locked, function, "after FM carried out");
  if (Status committed = locked->Commit(); !committed.ok()) {
    std::fprintf(stderr, "nvfm-sim: %s: %s\n", function, committed.message().c_str());
    return abi::kGenericError;
  }
  return code;
}

// The common prefix of every handle-based call.
#define SIM_RETURN_IF_NOT_OK(expr)                    \
  do {                                                \
    const int sim_code_ = (expr);                     \
    if (sim_code_ != abi::kSuccess) return sim_code_; \
  } while (false)

int CheckInitialised(const CallContext& c) {
  return c.process.initialised ? abi::kSuccess : abi::kUninitialized;
}

void FillGpu(const CallContext& c, const SimPartition& partition, std::uint32_t physical_id,
             abi::FabricPartitionGpuInfo* gpu) {
  gpu->physicalId = physical_id;
  gpu->uuid[0] = '\0';  // FM reports no UUID in shared mode, a BDF only on A100 class (§3.7)
  const auto bus_id = c.table.pci_bus_ids.find(physical_id);
  std::snprintf(gpu->pciBusId, sizeof(gpu->pciBusId), "%s",
                bus_id == c.table.pci_bus_ids.end() ? "00000000:00:00.0" : bus_id->second.c_str());
  gpu->maxNumNvLinks = partition.max_nvlinks;
  gpu->numNvLinksAvailable = c.LinksAvailable(partition);
  gpu->nvlinkLineRateMBps = c.table.nvlink_line_rate_mbps;
}

void MakeHostile(HostileReply hostile, abi::FabricPartitionList* list) {
  switch (hostile) {
    case HostileReply::kTooManyPartitions:
      list->numPartitions = abi::kMaxFabricPartitions + 1;
      break;
    case HostileReply::kTooManyGpus:
      list->partitionInfo[0].numGpus = abi::kMaxNumGpus + 1;
      break;
    case HostileReply::kUnterminatedStrings: {
      abi::FabricPartitionGpuInfo& gpu = list->partitionInfo[0].gpuInfo[0];
      std::memset(gpu.uuid, 'U', sizeof(gpu.uuid));
      std::memset(gpu.pciBusId, 'B', sizeof(gpu.pciBusId));
      break;
    }
    case HostileReply::kDuplicatePartitionIds:
      list->partitionInfo[1].partitionId = list->partitionInfo[0].partitionId;
      break;
    case HostileReply::kBadPhysicalId:
      list->partitionInfo[0].gpuInfo[0].physicalId = abi::kMaxNumGpus + 1;
      break;
    default:
      break;
  }
}

// The BDF spelling of sysfs ("0000:41:00.4"), which is how vf_parents is keyed. A field out of
// PCI range yields a string no canonical key equals, so such a VF simply has no known parent.
std::string VfName(const abi::PciDevice& vf) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04x:%02x:%02x.%x", vf.domain, vf.bus, vf.device,
                vf.function);
  return buffer;
}

// The VFs the caller passed, or none when the list is NULL or longer than FM accepts (then
// nothing may be read from it).
std::vector<std::string> VfNames(const abi::PciDevice* vf_list, unsigned num_vfs) {
  std::vector<std::string> names;
  if (vf_list == nullptr || num_vfs > abi::kMaxNumGpus) return names;
  for (unsigned i = 0; i < num_vfs; ++i) names.push_back(VfName(vf_list[i]));
  return names;
}

}  // namespace
}  // namespace gfp::fmsim

using gfp::fmsim::CallContext;
namespace abi = gfp::adapters::fm::abi;
namespace sim = gfp::fmsim;

#define FM_SIM_EXPORT extern "C" __attribute__((visibility("default")))

FM_SIM_EXPORT abi::fmReturn_t fmLibInit() {
  return sim::Call("fmLibInit", "", [](CallContext& c) {
    if (c.process.initialised) return static_cast<int>(abi::kInUse);
    int code = 0;
    if (c.TakeFault(&code)) return code;
    c.process.initialised = true;
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmLibShutdown() {
  return sim::Call("fmLibShutdown", "", [](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    int code = 0;
    if (c.TakeFault(&code)) return code;
    c.process.connections.clear();  // shutdown closes every connection of this process
    c.process.initialised = false;
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmConnect(void* connect_params, abi::fmHandle_t* handle_out) {
  std::string args = "params=null";
  if (connect_params != nullptr) {
    // Both structs share the v1 prefix; addressType exists only in v2.
    const auto* v1 = static_cast<const abi::ConnectParamsV1*>(connect_params);
    args = "version=" + sim::Hex(v1->version) + " address=" +
           std::string(v1->addressInfo, strnlen(v1->addressInfo, sizeof(v1->addressInfo))) +
           " timeoutMs=" + std::to_string(v1->timeoutMs) +
           " addressIsUnixSocket=" + std::to_string(v1->addressIsUnixSocket);
    if (v1->version == abi::kConnectParamsV2Version) {
      args += " addressType=" +
              std::to_string(static_cast<const abi::ConnectParamsV2*>(connect_params)->addressType);
    }
  }
  return sim::Call("fmConnect", args, [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    if (connect_params == nullptr || handle_out == nullptr) return static_cast<int>(abi::kBadParam);
    const auto* v1 = static_cast<const abi::ConnectParamsV1*>(connect_params);
    const bool v2 = v1->version == abi::kConnectParamsV2Version && !c.state.only_v1_connect;
    if (!v2 && v1->version != abi::kConnectParamsV1Version) {
      return static_cast<int>(abi::kVersionMismatch);
    }
    if (v1->timeoutMs == 0) return static_cast<int>(abi::kBadParam);
    const std::size_t length = strnlen(v1->addressInfo, sizeof(v1->addressInfo));
    if (length == 0 || length == sizeof(v1->addressInfo)) return static_cast<int>(abi::kBadParam);
    // The address form must agree with every selector the struct has.
    const bool is_path = v1->addressInfo[0] == '/';
    if (v1->addressIsUnixSocket > 1 || (v1->addressIsUnixSocket == 1) != is_path) {
      return static_cast<int>(abi::kBadParam);
    }
    if (v2) {
      const auto type = static_cast<const abi::ConnectParamsV2*>(connect_params)->addressType;
      if (type != (is_path ? abi::kAddrUnix : abi::kAddrInet))
        return static_cast<int>(abi::kBadParam);
    }
    SIM_RETURN_IF_NOT_OK(sim::ModelConnect(c));
    auto connection = std::make_unique<sim::Connection>();
    connection->generation = c.state.generation;
    *handle_out = connection.get();
    c.process.connections.emplace(connection.get(), std::move(connection));
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmDisconnect(abi::fmHandle_t handle) {
  return sim::Call("fmDisconnect", "", [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    auto it = c.process.connections.find(handle);
    if (it == c.process.connections.end()) return static_cast<int>(abi::kBadParam);
    int code = 0;
    if (c.TakeFault(&code)) return code;
    c.process.connections.erase(it);
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmGetSupportedFabricPartitions(abi::fmHandle_t handle,
                                                             abi::FabricPartitionList* list) {
  return sim::Call("fmGetSupportedFabricPartitions", "", [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    if (handle == nullptr || list == nullptr) return static_cast<int>(abi::kBadParam);
    if (list->version != abi::kFabricPartitionListVersion)
      return static_cast<int>(abi::kVersionMismatch);
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    std::vector<sim::ListedPartition> partitions;
    SIM_RETURN_IF_NOT_OK(sim::ModelSupportedPartitions(c, &partitions));
    list->numPartitions = static_cast<unsigned>(partitions.size());
    list->maxNumPartitions = list->numPartitions;
    for (std::size_t p = 0; p < partitions.size(); ++p) {
      const sim::SimPartition& partition = *partitions[p].partition;
      abi::FabricPartitionInfo& info = list->partitionInfo[p];
      info.partitionId = partition.id;
      info.isActive = partitions[p].active ? 1 : 0;
      info.numGpus = static_cast<unsigned>(partition.physical_ids.size());
      for (std::size_t g = 0; g < partition.physical_ids.size(); ++g) {
        sim::FillGpu(c, partition, partition.physical_ids[g], &info.gpuInfo[g]);
      }
    }
    sim::MakeHostile(c.state.hostile, list);
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmActivateFabricPartition(abi::fmHandle_t handle,
                                                        abi::fmFabricPartitionId_t id) {
  return sim::Call("fmActivateFabricPartition", std::to_string(id), [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    return sim::ModelActivate(c, id);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmActivateFabricPartitionWithVFs(abi::fmHandle_t handle,
                                                               abi::fmFabricPartitionId_t id,
                                                               abi::PciDevice* vf_list,
                                                               unsigned int num_vfs) {
  std::vector<std::string> vfs = sim::VfNames(vf_list, num_vfs);
  std::string args = std::to_string(id) + " numVfs=" + std::to_string(num_vfs) + " vfs=[";
  for (std::size_t i = 0; i < vfs.size(); ++i) args += (i == 0 ? "" : ",") + vfs[i];
  args += "]";
  auto body = [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    if (vf_list == nullptr && num_vfs != 0) {
      return c.Refuse(abi::kBadParam, "vfList is NULL with numVfs > 0");
    }
    if (num_vfs > abi::kMaxNumGpus) {
      return c.Refuse(abi::kBadParam, "more than " + std::to_string(abi::kMaxNumGpus) + " VFs");
    }
    return sim::ModelActivateWithVfs(c, id, vfs);
  };
  return sim::Call("fmActivateFabricPartitionWithVFs", args, body, vfs);
}

FM_SIM_EXPORT abi::fmReturn_t fmDeactivateFabricPartition(abi::fmHandle_t handle,
                                                          abi::fmFabricPartitionId_t id) {
  return sim::Call("fmDeactivateFabricPartition", std::to_string(id), [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    return sim::ModelDeactivate(c, id);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmSetActivatedFabricPartitions(
    abi::fmHandle_t handle, abi::ActivatedFabricPartitionList* list) {
  std::string args = "null";
  if (list != nullptr) {
    args = "[";
    for (unsigned i = 0; i < std::min<unsigned>(list->numPartitions, abi::kMaxFabricPartitions);
         ++i) {
      args += (i == 0 ? "" : ",") + std::to_string(list->partitionIds[i]);
    }
    args += "]";
  }
  return sim::Call("fmSetActivatedFabricPartitions", args, [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    if (handle == nullptr || list == nullptr) return static_cast<int>(abi::kBadParam);
    if (list->version != abi::kActivatedFabricPartitionListVersion) {
      return static_cast<int>(abi::kVersionMismatch);
    }
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    // More ids than the struct holds: one too many is enough for the model to refuse them.
    const unsigned count = std::min<unsigned>(list->numPartitions, abi::kMaxFabricPartitions);
    std::vector<std::uint32_t> ids(list->partitionIds, list->partitionIds + count);
    if (list->numPartitions > abi::kMaxFabricPartitions) ids.push_back(0);
    return sim::ModelSetActivated(c, std::move(ids));
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmGetNvlinkFailedDevices(abi::fmHandle_t handle,
                                                       abi::NvlinkFailedDevices* devices) {
  return sim::Call("fmGetNvlinkFailedDevices", "", [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    if (handle == nullptr || devices == nullptr) return static_cast<int>(abi::kBadParam);
    if (devices->version != abi::kNvlinkFailedDevicesVersion) {
      return static_cast<int>(abi::kVersionMismatch);
    }
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    int code = 0;
    if (c.TakeFault(&code)) return code;
    if (c.state.mode == sim::Mode::kStarting) return static_cast<int>(abi::kNotConfigured);
    // Not supported in FM's --restart (resiliency) mode (reference §1 #10).
    if (c.state.mode == sim::Mode::kAwaitingResync) return static_cast<int>(abi::kNotSupported);
    // One entry per GPU of a degraded partition, its missing links as failed ports.
    std::map<std::uint32_t, std::uint32_t> failed_ports;  // physical id -> failed link count
    for (const auto& [id, available] : c.state.degraded) {
      const sim::SimPartition* partition = c.table.Find(id);
      if (partition == nullptr || available >= partition->max_nvlinks) continue;
      for (std::uint32_t gpu : partition->physical_ids) {
        failed_ports[gpu] = std::max(failed_ports[gpu], partition->max_nvlinks - available);
      }
    }
    devices->numGpus = 0;
    devices->numSwitches = 0;
    for (const auto& [gpu, ports] : failed_ports) {
      if (devices->numGpus == abi::kMaxNumGpus) break;
      abi::NvlinkFailedDeviceInfo& info = devices->gpuInfo[devices->numGpus++];
      info.uuid[0] = '\0';
      std::snprintf(info.pciBusId, sizeof(info.pciBusId), "%s", "00000000:00:00.0");
      info.numPorts = std::min<std::uint32_t>(ports, abi::kMaxNumNvlinkPorts);
      for (unsigned p = 0; p < info.numPorts; ++p) info.portNum[p] = p;
    }
    if (c.state.hostile == sim::HostileReply::kTooManyFailedDevices) {
      devices->numGpus = abi::kMaxNumGpus + 1;
    } else if (c.state.hostile == sim::HostileReply::kUnterminatedStrings) {
      devices->numGpus = std::max(devices->numGpus, 1U);
      std::memset(devices->gpuInfo[0].uuid, 'U', sizeof(devices->gpuInfo[0].uuid));
    }
    return static_cast<int>(abi::kSuccess);
  });
}

FM_SIM_EXPORT abi::fmReturn_t fmGetUnsupportedFabricPartitions(
    abi::fmHandle_t handle, abi::UnsupportedFabricPartitionList* list) {
  return sim::Call("fmGetUnsupportedFabricPartitions", "", [&](CallContext& c) {
    SIM_RETURN_IF_NOT_OK(sim::CheckInitialised(c));
    if (handle == nullptr || list == nullptr) return static_cast<int>(abi::kBadParam);
    if (list->version != abi::kUnsupportedFabricPartitionListVersion) {
      return static_cast<int>(abi::kVersionMismatch);
    }
    SIM_RETURN_IF_NOT_OK(c.CheckHandle(handle));
    std::vector<const sim::SimPartition*> degraded;
    SIM_RETURN_IF_NOT_OK(sim::ModelUnsupportedPartitions(c, &degraded));
    list->numPartitions = 0;
    for (const sim::SimPartition* partition : degraded) {
      abi::UnsupportedFabricPartitionInfo& info = list->partitionInfo[list->numPartitions++];
      info.partitionId = partition->id;
      info.numGpus = static_cast<unsigned>(partition->physical_ids.size());
      std::copy(partition->physical_ids.begin(), partition->physical_ids.end(),
                info.gpuPhysicalIds);
    }
    if (c.state.hostile == sim::HostileReply::kTooManyUnsupported) {
      list->numPartitions = abi::kMaxFabricPartitions + 1;
    }
    return static_cast<int>(abi::kSuccess);
  });
}
