#include "sim/fm/fm_sim_control.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <functional>

#include "adapters/fm/fm_abi.h"
#include "adapters/host/bdf.h"
#include "sim/fm/fm_state_store.h"
#include "sim/fm/sim_state.h"
#include "sim/fm/sim_tables.h"

namespace gfp::fmsim {
namespace {

const std::vector<std::string_view> kFunctionNames(std::begin(adapters::fm::abi::kSymbolNames),
                                                   std::end(adapters::fm::abi::kSymbolNames));

Status CheckFunction(std::string_view function, bool allow_all) {
  if (allow_all && function == "*") return Status::Ok();
  if (std::find(kFunctionNames.begin(), kFunctionNames.end(), function) != kFunctionNames.end()) {
    return Status::Ok();
  }
  return InvalidArgument("\"" + std::string(function) + "\" is not a Fabric Manager SDK function");
}

Result<const SimPartition*> FindPartition(const SimState& state, std::uint32_t id) {
  GFP_ASSIGN_OR_RETURN(const SimTable* table, FindTable(state.table));
  const SimPartition* partition = table->Find(id);
  if (partition == nullptr) {
    return NotFound("partition " + std::to_string(id) + " is not in table " + state.table);
  }
  return partition;
}

bool TableHasGpu(const SimTable& table, std::uint32_t physical_id) {
  for (const SimPartition& partition : table.partitions) {
    const auto& ids = partition.physical_ids;
    if (std::find(ids.begin(), ids.end(), physical_id) != ids.end()) return true;
  }
  return false;
}

// The partition id is the first word of the call's args ("3 numVfs=2 vfs=[...]").
std::uint32_t PartitionIdOf(const CallRecord& record) {
  std::uint32_t id = 0;
  std::from_chars(record.args.data(), record.args.data() + record.args.size(), id);
  return id;
}

}  // namespace

Result<FmSimControl> FmSimControl::Create(const std::string& state_path, std::string_view table) {
  GFP_RETURN_IF_ERROR(FindTable(table).status());
  SimState initial;
  initial.table = std::string(table);
  GFP_RETURN_IF_ERROR(LockedState::Initialise(state_path, initial));
  return FmSimControl(state_path, std::make_shared<FileStateStore>(state_path));
}

Result<FmSimControl> FmSimControl::InMemory(std::string_view table) {
  GFP_RETURN_IF_ERROR(FindTable(table).status());
  SimState initial;
  initial.table = std::string(table);
  return FmSimControl("", std::make_shared<MemoryStateStore>(std::move(initial)));
}

Result<FmSimControl> FmSimControl::Open(const std::string& state_path) {
  GFP_RETURN_IF_ERROR(LockedState::Acquire(state_path).status());
  return FmSimControl(state_path, std::make_shared<FileStateStore>(state_path));
}

Status FmSimControl::SetMode(Mode mode) {
  return store_->Update([&](SimState& s) {
    s.mode = mode;
    return Status::Ok();
  });
}

Result<Mode> FmSimControl::GetMode() const {
  GFP_ASSIGN_OR_RETURN(SimState state, store_->Read());
  return state.mode;
}

Status FmSimControl::SetFabricMode(FabricMode mode) {
  return store_->Update([&](SimState& s) -> Status {
    if (mode != s.fabric_mode && !s.active.empty()) {
      return FailedPrecondition("cannot change the simulated Fabric Manager's fabric mode while " +
                                std::to_string(s.active.size()) +
                                " partition(s) are active; deactivate them first");
    }
    s.fabric_mode = mode;
    return Status::Ok();
  });
}

Result<FabricMode> FmSimControl::GetFabricMode() const {
  GFP_ASSIGN_OR_RETURN(SimState state, store_->Read());
  return state.fabric_mode;
}

Status FmSimControl::SetVfParent(std::string_view vf_bdf, std::uint32_t parent_physical_id) {
  GFP_ASSIGN_OR_RETURN(std::string vf, adapters::host::NormalizeBdf(vf_bdf));
  return store_->Update([&](SimState& s) -> Status {
    GFP_ASSIGN_OR_RETURN(const SimTable* table, FindTable(s.table));
    if (!TableHasGpu(*table, parent_physical_id)) {
      return InvalidArgument("GPU " + std::to_string(parent_physical_id) + " (parent of VF " + vf +
                             ") is not in table " + s.table);
    }
    s.vf_parents[vf] = parent_physical_id;
    return Status::Ok();
  });
}

Status FmSimControl::ClearVfParents() {
  return store_->Update([](SimState& s) {
    s.vf_parents.clear();
    return Status::Ok();
  });
}

Status FmSimControl::InjectFailure(std::string_view function, int code, int count) {
  GFP_RETURN_IF_ERROR(CheckFunction(function, false));
  return store_->Update([&](SimState& s) {
    if (count == 0) {
      s.faults.erase(std::string(function));
    } else {
      s.faults[std::string(function)] = Fault{code, count};
    }
    return Status::Ok();
  });
}

Status FmSimControl::ClearFailures() {
  return store_->Update([](SimState& s) {
    s.faults.clear();
    s.lost_replies.clear();
    s.crashes.clear();
    s.delays.clear();
    return Status::Ok();
  });
}

Status FmSimControl::LoseReply(std::string_view function, int code, int count) {
  GFP_RETURN_IF_ERROR(CheckFunction(function, false));
  if (count != 0 && code == 0) return InvalidArgument("a lost reply needs a failure code");
  return store_->Update([&](SimState& s) {
    if (count == 0) {
      s.lost_replies.erase(std::string(function));
    } else {
      s.lost_replies[std::string(function)] = LostReply{code, count};
    }
    return Status::Ok();
  });
}

Status FmSimControl::CrashCaller(std::string_view function, CrashPoint point, int count,
                                 int only_pid) {
  GFP_RETURN_IF_ERROR(CheckFunction(function, false));
  return store_->Update([&](SimState& s) {
    if (count == 0) {
      s.crashes.erase(std::string(function));
    } else {
      s.crashes[std::string(function)] = CallerCrash{point, count, only_pid};
    }
    return Status::Ok();
  });
}

Status FmSimControl::DelayNext(std::string_view function, int ms, int count) {
  GFP_RETURN_IF_ERROR(CheckFunction(function, false));
  if (ms < 0) return InvalidArgument("a delay must not be negative");
  return store_->Update([&](SimState& s) {
    if (count == 0 || ms == 0) {
      s.delays.erase(std::string(function));
    } else {
      s.delays[std::string(function)] = Delay{ms, count};
    }
    return Status::Ok();
  });
}

Result<int> FmSimControl::DelayedCallsInFlight() const {
  GFP_ASSIGN_OR_RETURN(SimState state, store_->Read());
  int in_flight = 0;
  for (int pid : state.delayed_pids) {
    if (::kill(pid, 0) == 0 || errno == EPERM) ++in_flight;  // a live process
  }
  return in_flight;
}

Status FmSimControl::SetLatency(std::string_view function, int ms) {
  GFP_RETURN_IF_ERROR(CheckFunction(function, true));
  if (ms < 0) return InvalidArgument("latency must not be negative");
  return store_->Update([&](SimState& s) {
    if (ms == 0) {
      s.latency_ms.erase(std::string(function));
    } else {
      s.latency_ms[std::string(function)] = ms;
    }
    return Status::Ok();
  });
}

Status FmSimControl::DropConnections() {
  return store_->Update([](SimState& s) {
    ++s.generation;
    return Status::Ok();
  });
}

Status FmSimControl::SetUnreachable(bool unreachable) {
  return store_->Update([&](SimState& s) {
    if (unreachable && !s.unreachable) ++s.generation;  // FM going away closes every handle
    s.unreachable = unreachable;
    return Status::Ok();
  });
}

Status FmSimControl::Restart(bool resiliency) {
  return store_->Update([&](SimState& s) {
    ++s.generation;
    if (resiliency) {
      s.mode = Mode::kAwaitingResync;
    } else {
      s.mode = Mode::kRunning;
      s.active.clear();
      s.active_vfs.clear();
    }
    return Status::Ok();
  });
}

Status FmSimControl::Degrade(std::uint32_t partition_id, std::uint32_t available_links) {
  return store_->Update([&](SimState& s) -> Status {
    GFP_ASSIGN_OR_RETURN(const SimPartition* partition, FindPartition(s, partition_id));
    if (available_links > partition->max_nvlinks) {
      return InvalidArgument("partition " + std::to_string(partition_id) + " has at most " +
                             std::to_string(partition->max_nvlinks) + " NVLinks per GPU");
    }
    if (available_links == partition->nvlinks_available) {
      s.degraded.erase(partition_id);
    } else {
      s.degraded[partition_id] = available_links;
    }
    return Status::Ok();
  });
}

Status FmSimControl::SetOnlyV1Connect(bool only_v1) {
  return store_->Update([&](SimState& s) {
    s.only_v1_connect = only_v1;
    return Status::Ok();
  });
}

Status FmSimControl::SetHostileReply(HostileReply reply) {
  return store_->Update([&](SimState& s) {
    s.hostile = reply;
    return Status::Ok();
  });
}

Result<std::vector<std::uint32_t>> FmSimControl::ActivePartitions() const {
  GFP_ASSIGN_OR_RETURN(SimState state, store_->Read());
  return state.active;
}

Result<std::map<std::uint32_t, std::vector<std::string>>> FmSimControl::ActiveVfs() const {
  GFP_ASSIGN_OR_RETURN(SimState state, store_->Read());
  return state.active_vfs;
}

// Direct changes bypass the SDK's checks on purpose: they model another actor changing FM.
Status FmSimControl::ActivateDirectly(std::uint32_t partition_id, std::vector<std::string> vfs) {
  return store_->Update([&](SimState& s) -> Status {
    GFP_RETURN_IF_ERROR(FindPartition(s, partition_id).status());
    if (!std::binary_search(s.active.begin(), s.active.end(), partition_id)) {
      s.active.insert(std::upper_bound(s.active.begin(), s.active.end(), partition_id),
                      partition_id);
    }
    if (!vfs.empty()) s.active_vfs[partition_id] = std::move(vfs);
    return Status::Ok();
  });
}

Status FmSimControl::DeactivateDirectly(std::uint32_t partition_id) {
  return store_->Update([&](SimState& s) -> Status {
    GFP_RETURN_IF_ERROR(FindPartition(s, partition_id).status());
    std::erase(s.active, partition_id);
    s.active_vfs.erase(partition_id);
    return Status::Ok();
  });
}

Result<std::vector<CallRecord>> FmSimControl::CallLog() const { return store_->CallLog(); }

Result<std::vector<VfActivation>> FmSimControl::VfActivations() const {
  GFP_ASSIGN_OR_RETURN(std::vector<CallRecord> log, CallLog());
  std::vector<VfActivation> activations;
  for (CallRecord& record : log) {
    if (record.function != "fmActivateFabricPartitionWithVFs") continue;
    activations.push_back(VfActivation{PartitionIdOf(record), std::move(record.vfs), record.code,
                                       std::move(record.note)});
  }
  return activations;
}

Status FmSimControl::ClearCallLog() { return store_->ClearCallLog(); }

}  // namespace gfp::fmsim
