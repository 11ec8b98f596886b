#include "sim/fm/fabric_model.h"

#include <algorithm>
#include <set>

#include "adapters/fm/fm_abi.h"

namespace gfp::fmsim {
namespace {

namespace abi = gfp::adapters::fm::abi;

// IN_USE when the partition or one of its GPUs is already active; NVLINK_ERROR when degraded.
int CheckCanActivate(const FabricCall& c, const SimPartition& partition) {
  for (std::uint32_t active_id : c.state.active) {
    const SimPartition* active = c.table.Find(active_id);
    if (active_id == partition.id || (active != nullptr && Overlap(*active, partition))) {
      return abi::kInUse;
    }
  }
  if (c.LinksAvailable(partition) < partition.max_nvlinks) {
    return abi::kNvlinkError;  // degraded links fail training
  }
  return abi::kSuccess;
}

void MarkActive(SimState& state, std::uint32_t id) {
  state.active.insert(std::upper_bound(state.active.begin(), state.active.end(), id), id);
}

// vGPU activation (reference §1 row 7, upstream-behaviour §3.3): exactly one VF per GPU of the
// partition, vfs[i] a VF of the partition's i-th GPU. Every violation is BADPARAM; `note` says
// which rule.
int CheckVfList(FabricCall& c, const SimPartition& partition, const std::vector<std::string>& vfs) {
  if (vfs.size() != partition.physical_ids.size()) {
    return c.Refuse(abi::kBadParam, std::to_string(vfs.size()) + " VFs for a partition of " +
                                        std::to_string(partition.physical_ids.size()) + " GPUs");
  }
  std::set<std::uint32_t> parents_seen;
  for (std::size_t i = 0; i < vfs.size(); ++i) {
    const auto parent = c.state.vf_parents.find(vfs[i]);
    if (parent == c.state.vf_parents.end()) {
      return c.Refuse(abi::kBadParam, "VF " + vfs[i] + " has no known parent GPU");
    }
    const std::uint32_t gpu = parent->second;
    if (!parents_seen.insert(gpu).second) {
      return c.Refuse(abi::kBadParam, "two VFs of GPU " + std::to_string(gpu));
    }
    const auto& ids = partition.physical_ids;
    if (std::find(ids.begin(), ids.end(), gpu) == ids.end()) {
      return c.Refuse(abi::kBadParam, "VF " + vfs[i] + " belongs to GPU " + std::to_string(gpu) +
                                          ", which is not in partition " +
                                          std::to_string(partition.id));
    }
    if (gpu != ids[i]) {
      return c.Refuse(abi::kBadParam, "VF " + vfs[i] + " (GPU " + std::to_string(gpu) +
                                          ") is at position " + std::to_string(i) +
                                          " where the partition has GPU " + std::to_string(ids[i]));
    }
  }
  return abi::kSuccess;
}

// Duplicates or overlapping partitions in a resync list are BADPARAM; `ids` sorted.
int CheckResyncList(const FabricCall& c, const std::vector<std::uint32_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const SimPartition* partition = c.table.Find(ids[i]);
    if (partition == nullptr) return abi::kBadParam;
    for (std::size_t j = 0; j < i; ++j) {
      if (ids[j] == ids[i] || Overlap(*c.table.Find(ids[j]), *partition)) return abi::kBadParam;
    }
  }
  return abi::kSuccess;
}

}  // namespace

int FabricCall::Refuse(int code, std::string why) {
  note = std::move(why);
  return code;
}

bool FabricCall::TakeFault(int* code) {
  auto it = state.faults.find(function);
  if (it == state.faults.end()) return false;
  *code = it->second.code;
  ConsumeOne(state.faults, it);
  return true;
}

bool FabricCall::IsActive(std::uint32_t id) const {
  return std::binary_search(state.active.begin(), state.active.end(), id);
}

int FabricCall::CheckPartitionMode() const {
  return state.mode == Mode::kRunning ? abi::kSuccess : abi::kNotConfigured;
}

std::uint32_t FabricCall::LinksAvailable(const SimPartition& partition) const {
  auto it = state.degraded.find(partition.id);
  return it == state.degraded.end() ? partition.nvlinks_available : it->second;
}

bool Overlap(const SimPartition& a, const SimPartition& b) {
  for (std::uint32_t id : a.physical_ids) {
    if (std::find(b.physical_ids.begin(), b.physical_ids.end(), id) != b.physical_ids.end()) {
      return true;
    }
  }
  return false;
}

int ModelConnect(FabricCall& c) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (c.state.unreachable) return abi::kConnectionNotValid;
  return abi::kSuccess;
}

int ModelSupportedPartitions(FabricCall& c, std::vector<ListedPartition>* out) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (int mode = c.CheckPartitionMode(); mode != abi::kSuccess) return mode;
  out->clear();
  for (const SimPartition& partition : c.table.partitions) {
    out->push_back({&partition, c.IsActive(partition.id), c.LinksAvailable(partition)});
  }
  return abi::kSuccess;
}

int ModelUnsupportedPartitions(FabricCall& c, std::vector<const SimPartition*>* out) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (int mode = c.CheckPartitionMode(); mode != abi::kSuccess) return mode;
  out->clear();
  for (const SimPartition& partition : c.table.partitions) {
    if (c.LinksAvailable(partition) < partition.max_nvlinks) out->push_back(&partition);
  }
  return abi::kSuccess;
}

int ModelActivate(FabricCall& c, std::uint32_t id) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (c.state.fabric_mode != FabricMode::kSharedNvswitch) {
    return c.Refuse(abi::kNotSupported, "FABRIC_MODE=2 (vGPU) activates partitions with VFs");
  }
  if (int mode = c.CheckPartitionMode(); mode != abi::kSuccess) return mode;
  const SimPartition* partition = c.table.Find(id);
  if (partition == nullptr) return abi::kBadParam;
  if (int can = CheckCanActivate(c, *partition); can != abi::kSuccess) return can;
  MarkActive(c.state, id);
  return abi::kSuccess;
}

int ModelActivateWithVfs(FabricCall& c, std::uint32_t id, const std::vector<std::string>& vfs) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (c.state.fabric_mode != FabricMode::kVgpu) {
    return c.Refuse(abi::kNotSupported, "FABRIC_MODE=1 (shared NVSwitch) activates whole GPUs");
  }
  if (int mode = c.CheckPartitionMode(); mode != abi::kSuccess) return mode;
  const SimPartition* partition = c.table.Find(id);
  if (partition == nullptr) return abi::kBadParam;
  if (int listed = CheckVfList(c, *partition, vfs); listed != abi::kSuccess) return listed;
  if (int can = CheckCanActivate(c, *partition); can != abi::kSuccess) return can;
  MarkActive(c.state, id);
  c.state.active_vfs[id] = vfs;
  return abi::kSuccess;
}

int ModelDeactivate(FabricCall& c, std::uint32_t id) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (int mode = c.CheckPartitionMode(); mode != abi::kSuccess) return mode;
  if (c.table.Find(id) == nullptr) return abi::kBadParam;
  if (!c.IsActive(id)) return abi::kUninitialized;  // per [UG]
  std::erase(c.state.active, id);
  c.state.active_vfs.erase(id);
  return abi::kSuccess;
}

int ModelSetActivated(FabricCall& c, std::vector<std::uint32_t> ids) {
  int code = 0;
  if (c.TakeFault(&code)) return code;
  if (c.state.mode == Mode::kStarting) return abi::kNotConfigured;
  // Only meaningful after a restart in resiliency mode (our choice for the running case).
  if (c.state.mode == Mode::kRunning) return abi::kNotSupported;
  if (ids.size() > abi::kMaxFabricPartitions) return abi::kBadParam;
  std::sort(ids.begin(), ids.end());
  if (int checked = CheckResyncList(c, ids); checked != abi::kSuccess) return checked;
  // Partitions left out are no longer active, so their VF lists go too.
  std::erase_if(c.state.active_vfs, [&](const auto& entry) {
    return !std::binary_search(ids.begin(), ids.end(), entry.first);
  });
  c.state.active = std::move(ids);
  c.state.mode = Mode::kRunning;
  return abi::kSuccess;
}

int LoseReplyIfArmed(FabricCall& c, int code) {
  if (code != abi::kSuccess) return code;
  auto it = c.state.lost_replies.find(c.function);
  if (it == c.state.lost_replies.end()) return code;
  const int lost = it->second.code;
  ConsumeOne(c.state.lost_replies, it);
  if (lost == abi::kConnectionNotValid) ++c.state.generation;  // the link went down
  c.note = "carried out; reply lost (the caller got " + std::to_string(lost) + ")";
  return lost;
}

bool TakeCrash(FabricCall& c, CrashPoint point, int pid) {
  auto it = c.state.crashes.find(c.function);
  if (it == c.state.crashes.end() || it->second.point != point) return false;
  if (it->second.only_pid != 0 && it->second.only_pid != pid) return false;
  ConsumeOne(c.state.crashes, it);
  return true;
}

}  // namespace gfp::fmsim
