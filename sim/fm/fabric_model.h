// Fabric Manager's behaviour on its partition table, once a call has reached the daemon: injected
// faults, the fabric mode, the daemon's mode, and the partition semantics of
// reference/fabric-manager.md §1 and §5. One definition, used by both ways a call arrives:
// libnvfm-sim.so's C ABI (nvfm_sim.cc: argument, struct-version and handle checks first) and the
// deterministic simulation's in-memory Fabric Manager (sim/world/in_memory_fabric).
//
// Every function returns an FM return code (fm_codes.h); `FabricCall::note` says why when the
// code alone does not. Faults are consumed where the real library would meet them: after the
// caller's own checks, before the daemon's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/fm/sim_state.h"
#include "sim/fm/sim_tables.h"

namespace gfp::fmsim {

// What one call sees while it holds the state.
struct FabricCall {
  const char* function;  // the SDK function's name: faults are keyed by it
  SimState& state;
  const SimTable& table;
  std::string note;  // why the call was refused, for the call log

  int Refuse(int code, std::string why);
  // Consumes one injected failure for this function, if any.
  bool TakeFault(int* code);
  bool IsActive(std::uint32_t id) const;
  // Partition calls are refused while FM initialises or waits for the resync list.
  int CheckPartitionMode() const;
  std::uint32_t LinksAvailable(const SimPartition& partition) const;
};

// One supported partition as FM lists it.
struct ListedPartition {
  const SimPartition* partition = nullptr;
  bool active = false;
  std::uint32_t links_available = 0;
};

bool Overlap(const SimPartition& a, const SimPartition& b);

// Consumes one use of a counted fault (Fault, LostReply, CallerCrash, Delay).
template <typename F>
void ConsumeOne(std::map<std::string, F>& faults, typename std::map<std::string, F>::iterator it) {
  if (it->second.remaining != kAlways && --it->second.remaining <= 0) faults.erase(it);
}

// fmConnect once its arguments passed: a fault, or CONNECTION_NOT_VALID while unreachable.
int ModelConnect(FabricCall& c);
// fmGetSupportedFabricPartitions: every partition of the table, in table order.
int ModelSupportedPartitions(FabricCall& c, std::vector<ListedPartition>* out);
// fmGetUnsupportedFabricPartitions: the partitions whose links are degraded.
int ModelUnsupportedPartitions(FabricCall& c, std::vector<const SimPartition*>* out);
// fmActivateFabricPartition (FABRIC_MODE=1).
int ModelActivate(FabricCall& c, std::uint32_t id);
// fmActivateFabricPartitionWithVFs (FABRIC_MODE=2), its list already read (canonical BDFs).
int ModelActivateWithVfs(FabricCall& c, std::uint32_t id, const std::vector<std::string>& vfs);
// fmDeactivateFabricPartition.
int ModelDeactivate(FabricCall& c, std::uint32_t id);
// fmSetActivatedFabricPartitions, its list already read (at most kMaxFabricPartitions + 1 ids:
// more is BADPARAM).
int ModelSetActivated(FabricCall& c, std::vector<std::uint32_t> ids);

// A call FM carried out whose reply is lost: the armed code instead of SUCCESS (a lost
// CONNECTION_NOT_VALID also drops every connection). Returns `code` unchanged otherwise.
int LoseReplyIfArmed(FabricCall& c, int code);
// True (and one use consumed) when the caller must crash at `point` of this call; `pid` is the
// caller's (a crash armed for another process does not apply).
bool TakeCrash(FabricCall& c, CrashPoint point, int pid);

}  // namespace gfp::fmsim
