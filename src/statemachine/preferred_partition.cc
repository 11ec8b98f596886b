// GetPreferredAllocation with Fabric Manager (SPEC §4.3): the GPUs of one whole, healthy
// partition of the asked size, ranked by the larger free partitions it would break, then NUMA.
// Works on numbered GPUs (gpu_numbering.h): no string is built unless the call is refused.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "common/text_escape.h"
#include "statemachine/gpu_numbering.h"
#include "statemachine/preferred.h"

namespace gfp::sm {
namespace {

// What the request offers for one numbered GPU.
struct GpuOffer {
  const std::string* lowest = nullptr;  // the lowest available device standing for it
  const std::string* must = nullptr;    // the must-include device on it
};

// The request seen through the numbering: one VM gets one device per GPU of a partition, a whole
// GPU itself or one of its VFs (the must-include one where there is one, else the lowest BDF).
struct Offer {
  bool vfs = false;
  std::vector<GpuOffer> gpus;                    // by number
  std::vector<std::optional<std::size_t>> must;  // the GPU number of each must-include device
  GpuSets available;                             // row 0: GPUs with an available device

  Offer(std::size_t gpus_in_mapping, std::size_t musts)
      : gpus(gpus_in_mapping), available(1, gpus_in_mapping) {
    must.reserve(musts);
  }

  // The device answered for GPU `gpu`.
  const std::string& DeviceFor(const GpuNumbering& numbering, std::size_t gpu) const {
    const GpuOffer& o = gpus[gpu];
    return o.must ? *o.must : o.lowest ? *o.lowest : numbering.bdf(gpu);
  }
};

const DeviceState* Find(const State& state, const std::string& id) {
  auto device = state.devices.value().find(id);
  return device == state.devices.value().end() ? nullptr : &device->second;
}

const Bdf& GpuOfDevice(const DeviceState* device, const std::string& id) {
  return device == nullptr || device->parent_bdf.empty() ? id : device->parent_bdf;
}

Status TwoMustOnOneGpu(const State& state, const PreferredRequest& request,
                       const std::vector<std::string>& must) {
  std::map<Bdf, const std::string*> on_gpu;
  for (const std::string& id : must) {
    auto [other, fresh] = on_gpu.emplace(GpuOf(state, id), &id);
    if (fresh) continue;
    return FailedPrecondition(
        "no Fabric Manager partition of " + std::to_string(request.size) +
        " GPUs can be formed: must-include VFs " + EscapeAndTruncate(*other->second, 80) + " and " +
        EscapeAndTruncate(id, 80) + " are on the same GPU " + EscapeAndTruncate(other->first, 80) +
        "; Fabric Manager takes one VF per GPU");
  }
  return Status::Ok();
}

Result<Offer> OfferOf(const State& state, const GpuNumbering& numbering,
                      const PreferredRequest& request, const std::vector<std::string>& must) {
  GFP_RETURN_IF_ERROR(TwoMustOnOneGpu(state, request, must));
  Offer offer(numbering.size(), must.size());
  for (const std::string& id : request.available) {
    const DeviceState* device = Find(state, id);
    offer.vfs |= device != nullptr && device->kind == DeviceKind::kVgpuVf;
    const auto gpu = numbering.OfBdf(GpuOfDevice(device, id));
    if (!gpu) continue;  // on no GPU of the mapping: in no partition
    const std::string*& lowest = offer.gpus[*gpu].lowest;
    if (lowest == nullptr || id < *lowest) lowest = &id;
    offer.available.Add(0, *gpu);
  }
  for (const std::string& id : must) {
    const DeviceState* device = Find(state, id);
    offer.vfs |= device != nullptr && device->kind == DeviceKind::kVgpuVf;
    const auto gpu = numbering.OfBdf(GpuOfDevice(device, id));
    if (gpu) offer.gpus[*gpu].must = &id;
    offer.must.push_back(gpu);
  }
  return offer;
}

// The partitions as GPU sets, one row each in id order.
struct Row {
  const PartitionState* partition;
  bool mapped;  // every module has a GPU in the mapping
  bool usable;  // mapped, and every GPU has an available device
};
struct Table {
  std::vector<Row> rows;
  GpuSets gpus;
};

Table TableOf(const State& state, const GpuNumbering& numbering, const Offer& offer) {
  const auto& partitions = state.partitions.value();
  Table table{{}, GpuSets(partitions.size(), numbering.size())};
  table.rows.reserve(partitions.size());
  for (const auto& [pid, partition] : partitions) {
    const std::size_t row = table.rows.size();
    bool mapped = true;
    for (ModuleId module : partition.physical_ids) {
      const auto gpu = numbering.OfModule(module);
      mapped = mapped && gpu.has_value();
      if (gpu) table.gpus.Add(row, *gpu);
    }
    table.rows.push_back(
        {&partition, mapped, mapped && table.gpus.SubsetOf(row, offer.available, 0)});
  }
  return table;
}

// Why the partition at `row` cannot be offered; empty when it can. Text only for a refusal.
std::string WhyNotOffered(const State& state, const GpuNumbering& numbering, const Offer& offer,
                          const Table& table, std::size_t row,
                          const std::vector<std::string>& must) {
  const PartitionState& p = *table.rows[row].partition;
  auto named = [&](const std::string& why) {
    return "partition " + std::to_string(p.id) + ": " + why;
  };
  if (!table.rows[row].mapped) return named(DevicesOfPartition(state, p).missing_reason);
  for (ModuleId module : p.physical_ids) {
    const std::size_t gpu = *numbering.OfModule(module);
    if (offer.available.Has(0, gpu)) continue;
    return named("GPU " + numbering.bdf(gpu) +
                 (offer.vfs ? " has no available VF" : " is not available"));
  }
  if (p.degraded()) {
    return named("degraded (" + std::to_string(p.nvlinks_available) + "/" +
                 std::to_string(p.max_nvlinks) + " NVLinks" +
                 (p.unsupported ? ", unsupported by Fabric Manager" : "") + ")");
  }
  for (std::size_t i = 0; i < must.size(); ++i) {
    if (offer.must[i] && table.gpus.Has(row, *offer.must[i])) continue;
    return named("does not contain " +
                 (offer.vfs ? "GPU " + GpuOf(state, must[i]) + " of must-include VF "
                            : std::string("must-include device ")) +
                 EscapeAndTruncate(must[i], 80));
  }
  return "";
}

struct Candidate {
  std::size_t row = 0;
  PartitionId id = 0;
  int breaks = 0;      // still-whole, larger free partitions this choice would break
  int numa_nodes = 0;  // distinct NUMA nodes spanned
  int lowest_numa = 0;

  auto rank() const { return std::tie(breaks, numa_nodes, lowest_numa, id); }
};

Candidate RankCandidate(const State& state, const GpuNumbering& numbering, const Offer& offer,
                        const Table& table, std::size_t row, std::size_t size) {
  Candidate c{row, table.rows[row].partition->id};
  std::set<int> nodes;
  for (ModuleId module : table.rows[row].partition->physical_ids) {
    const DeviceState* device =
        Find(state, offer.DeviceFor(numbering, *numbering.OfModule(module)));
    nodes.insert(device == nullptr ? 0 : device->numa_node);
  }
  c.numa_nodes = static_cast<int>(nodes.size());
  c.lowest_numa = nodes.empty() ? 0 : *nodes.begin();
  for (std::size_t larger = 0; larger < table.rows.size(); ++larger) {
    if (table.rows[larger].partition->physical_ids.size() <= size || !table.rows[larger].usable)
      continue;
    if (table.gpus.Overlap(row, table.gpus, larger)) ++c.breaks;
  }
  return c;
}

// The refusal when no partition fits, with each same-size partition's reason.
Status NoPartitionFits(const State& state, std::size_t size, std::size_t same_size,
                       const std::vector<std::string>& reasons) {
  std::string why = "no Fabric Manager partition of " + std::to_string(size) +
                    " GPUs can be formed from the available devices";
  if (same_size == 0) {
    std::set<std::size_t> sizes;
    for (const auto& [pid, p] : state.partitions.value()) sizes.insert(p.physical_ids.size());
    why += ": no partition has " + std::to_string(size) + " GPUs (sizes:";
    for (std::size_t s : sizes) why += " " + std::to_string(s);
    why += ")";
  } else {
    why += ":";
    for (const auto& r : reasons) why += " " + r + ";";
    why.pop_back();
  }
  return FailedPrecondition(why);
}

// The devices answered for the chosen partition: one VF per GPU in the partition's GPU order
// (the order FM is given them in), or the must-include GPUs then the others in kubelet's order.
std::vector<std::string> AnswerFor(const GpuNumbering& numbering, const Offer& offer,
                                   const Table& table, std::size_t row,
                                   const PreferredRequest& request,
                                   const std::vector<std::string>& must) {
  const PartitionState& best = *table.rows[row].partition;
  std::vector<std::string> answer;
  answer.reserve(best.physical_ids.size());
  if (offer.vfs) {
    for (ModuleId module : best.physical_ids) {
      answer.push_back(offer.DeviceFor(numbering, *numbering.OfModule(module)));
    }
    return answer;
  }
  answer.insert(answer.end(), must.begin(), must.end());
  for (const std::string& id : request.available) {
    const auto gpu = numbering.OfBdf(id);  // a whole GPU is its own BDF
    if (gpu && table.gpus.Has(row, *gpu) &&
        std::find(answer.begin(), answer.end(), id) == answer.end()) {
      answer.push_back(id);
    }
  }
  return answer;
}

std::vector<std::string> Dedup(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto& id : ids) {
    if (seen.insert(id).second) out.push_back(id);
  }
  return out;
}

// The checks that need no partition: the size, the must-include count, a known table.
Status CheckPartitionRequest(const State& state, const PreferredRequest& request,
                             const std::vector<std::string>& must) {
  if (request.size == 0) return InvalidArgument("allocation size 0 requested");
  if (must.size() > request.size) return TooManyMustInclude(must.size(), request.size);
  if (state.partitions.value().empty()) {
    return FailedPrecondition(
        std::string("Fabric Manager is not usable: ") +
        (state.fm_connected ? "its partition table is not known yet" : "it is not connected") +
        "; cannot choose GPUs that form one partition");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> PreferredByPartition(const State& state,
                                                      const PreferredRequest& request) {
  const std::vector<std::string> must = Dedup(request.must_include);
  GFP_RETURN_IF_ERROR(CheckPartitionRequest(state, request, must));
  const GpuNumbering numbering(state);
  GFP_ASSIGN_OR_RETURN(const Offer offer, OfferOf(state, numbering, request, must));
  const Table table = TableOf(state, numbering, offer);

  std::optional<Candidate> best;
  std::vector<std::string> reasons;
  std::size_t same_size = 0;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    if (table.rows[row].partition->physical_ids.size() != request.size) continue;
    ++same_size;
    // Cheap tests first: an offerable partition builds no reason text.
    const bool offerable = table.rows[row].usable && !table.rows[row].partition->degraded() &&
                           std::all_of(offer.must.begin(), offer.must.end(),
                                       [&](auto gpu) { return gpu && table.gpus.Has(row, *gpu); });
    if (!offerable) {
      reasons.push_back(WhyNotOffered(state, numbering, offer, table, row, must));
      continue;
    }
    Candidate c = RankCandidate(state, numbering, offer, table, row, request.size);
    if (!best || c.rank() < best->rank()) best = c;
  }
  if (!best) return NoPartitionFits(state, request.size, same_size, reasons);
  return AnswerFor(numbering, offer, table, best->row, request, must);
}

}  // namespace gfp::sm
