// Control API of the simulated Fabric Manager (libnvfm-sim.so), for tests and the demo. It works
// on the same state file the library uses, so it can change FM "from outside" while a plugin is
// connected: inject faults, add latency, drop connections, restart FM, degrade NVLinks, or change
// partitions behind the plugin's back (drift).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/fm/fm_state_store.h"
#include "sim/fm/sim_types.h"

namespace gfp::fmsim {

// One fmActivateFabricPartitionWithVFs call as the simulator saw it.
struct VfActivation {
  std::uint32_t partition_id = 0;
  std::vector<std::string> vfs;  // canonical BDFs, in the order passed
  int code = 0;
  std::string note;  // which rule refused it, if one did
  friend bool operator==(const VfActivation&, const VfActivation&) = default;
};

class FmSimControl {
 public:
  // Writes a fresh state (running, nothing active, no faults) for table "h100", "b200", "a100"
  // or "hgx2", and empties the call log. The library finds the file through $NVFM_SIM_STATE.
  static Result<FmSimControl> Create(const std::string& state_path, std::string_view table);
  // Attaches to an existing state file.
  static Result<FmSimControl> Open(const std::string& state_path);
  // A fresh state in memory (no file, no library): the deterministic simulation's FM, whose
  // calls arrive through sim/world's in-memory FabricPort. state_path() is empty.
  static Result<FmSimControl> InMemory(std::string_view table);
  // Over a store the caller made (e.g. a MemoryStateStore it also serves calls from).
  static FmSimControl Over(std::shared_ptr<FmStateStore> store) {
    return FmSimControl("", std::move(store));
  }

  const std::string& state_path() const { return path_; }
  // Where the state lives (the file, or memory for InMemory).
  FmStateStore& store() { return *store_; }

  Status SetMode(Mode mode);
  Result<Mode> GetMode() const;
  // FM's FABRIC_MODE (default shared NVSwitch). In vGPU mode fmActivateFabricPartition is
  // NOT_SUPPORTED and fmActivateFabricPartitionWithVFs activates; in shared NVSwitch mode the
  // reverse. FM fixes its mode at start, so this is refused while any partition is active.
  Status SetFabricMode(FabricMode mode);
  Result<FabricMode> GetFabricMode() const;
  // Tells FM that the SR-IOV VF `vf_bdf` (any spelling NormalizeBdf accepts) belongs to the GPU
  // with `parent_physical_id`, which must be a GPU of the table. Real FM learns this from PCI;
  // a VF the simulator was not told about has no known parent (BADPARAM on activation).
  Status SetVfParent(std::string_view vf_bdf, std::uint32_t parent_physical_id);
  Status ClearVfParents();
  // The next `count` calls of `function` (an SDK name such as "fmActivateFabricPartition")
  // return `code`; kAlways for every call; 0 clears it.
  Status InjectFailure(std::string_view function, int code, int count = 1);
  // Also clears lost replies, caller crashes and one-shot delays (not latency).
  Status ClearFailures();
  // "Applied but the reply was lost": the next `count` calls of `function` that succeed are
  // carried out (partition activated, deactivated, active set taken) and then return `code`
  // (FM_ST_TIMEOUT, or FM_ST_CONNECTION_NOT_VALID, which also drops every connection as a lost
  // link does). A call that fails anyway returns its own code and consumes nothing. 0 clears it.
  Status LoseReply(std::string_view function, int code, int count = 1);
  // The next `count` calls of `function` end the calling process with _exit(kCrashExitCode)
  // (no destructors, no reply): kBefore just before FM carries the call out, kAfter just after
  // (state and call log written). With `only_pid` set, only that process crashes; calls of
  // other processes neither crash nor consume it. 0 clears it.
  Status CrashCaller(std::string_view function, CrashPoint point, int count = 1, int only_pid = 0);
  // The next `count` calls of `function` sleep `ms` before they run (without the lock), on top
  // of any SetLatency. 0 clears it.
  Status DelayNext(std::string_view function, int ms, int count = 1);
  // Calls still sleeping a DelayNext delay (0 once every delayed call has returned or its
  // process has died).
  Result<int> DelayedCallsInFlight() const;
  // Delay before each call of `function`, or of every function when it is "*".
  Status SetLatency(std::string_view function, int ms);
  // Every open handle (of every process) becomes invalid: CONNECTION_NOT_VALID until reconnect.
  Status DropConnections();
  // While unreachable, fmConnect fails with CONNECTION_NOT_VALID and open handles are invalid.
  Status SetUnreachable(bool unreachable);
  // FM restart. Resiliency: handles invalid, active set kept, partition calls refused until
  // fmSetActivatedFabricPartitions. Without: handles invalid, every partition inactive.
  Status Restart(bool resiliency);
  // The partition's GPUs report `available_links` NVLinks; below the maximum it is listed by
  // fmGetUnsupportedFabricPartitions and its activation fails with NVLINK_ERROR.
  Status Degrade(std::uint32_t partition_id, std::uint32_t available_links);
  // Makes fmConnect accept only the v1 connect struct (like FM 535 and older).
  Status SetOnlyV1Connect(bool only_v1);
  Status SetHostileReply(HostileReply reply);

  Result<std::vector<std::uint32_t>> ActivePartitions() const;
  // vGPU mode: each active partition's VF list, as its activation passed it.
  Result<std::map<std::uint32_t, std::vector<std::string>>> ActiveVfs() const;
  // `vfs` (canonical BDFs) is recorded as the partition's VF list when not empty.
  Status ActivateDirectly(std::uint32_t partition_id, std::vector<std::string> vfs = {});
  Status DeactivateDirectly(std::uint32_t partition_id);

  Result<std::vector<CallRecord>> CallLog() const;
  // Every fmActivateFabricPartitionWithVFs call still in the call log, oldest first.
  Result<std::vector<VfActivation>> VfActivations() const;
  Status ClearCallLog();

 private:
  FmSimControl(std::string path, std::shared_ptr<FmStateStore> store)
      : path_(std::move(path)), store_(std::move(store)) {}

  std::string path_;
  std::shared_ptr<FmStateStore> store_;
};

}  // namespace gfp::fmsim
