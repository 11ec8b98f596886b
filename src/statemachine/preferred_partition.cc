// GetPreferredAllocation with Fabric Manager (SPEC §4.3): the GPUs of one whole, healthy
// partition of the asked size, ranked by the larger free partitions it would break, then NUMA.
// Works on numbered GPUs (gpu_numbering.h): no string is built unless the call is refused.
#include <algorithm>
#include <map>
#include <optional>

#include "statemachine/gpu_numbering.h"
#include "statemachine/preferred.h"
#include "statemachine/preferred_checks.h"

namespace gfp::sm {
namespace {

// What the request offers for one numbered GPU: devices and their state (null: unknown).
struct GpuOffer {
  const std::string* lowest = nullptr;  // the lowest available device standing for it
  const DeviceState* lowest_state = nullptr;
  const std::string* must = nullptr;  // the must-include device on it
  const DeviceState* must_state = nullptr;
};

// An available device: the GPU number it stands for, and whether it is that GPU itself.
struct AvailableDevice {
  std::optional<std::size_t> gpu;
  bool whole_gpu = false;
};

// The request seen through the numbering: one VM gets one device per GPU of a partition, a whole
// GPU itself or one of its VFs (the must-include one where there is one, else the lowest BDF).
struct Offer {
  bool vfs = false;
  std::vector<GpuOffer> gpus;                    // by number
  std::vector<AvailableDevice> available_ids;    // parallel to request.available
  std::vector<std::optional<std::size_t>> must;  // the GPU number of each must-include device
  GpuSets available;                             // row 0: GPUs with an available device

  Offer(std::size_t gpus_in_mapping, std::size_t availables, std::size_t musts)
      : gpus(gpus_in_mapping), available(1, gpus_in_mapping) {
    available_ids.reserve(availables);
    must.reserve(musts);
  }

  // The device answered for GPU `gpu`.
  const std::string& DeviceFor(const GpuNumbering& numbering, std::size_t gpu) const {
    const GpuOffer& o = gpus[gpu];
    return o.must ? *o.must : o.lowest ? *o.lowest : numbering.bdf(gpu);
  }
  // Its NUMA node (0 when the state does not know the device).
  int NumaFor(const State& state, const GpuNumbering& numbering, std::size_t gpu) const;
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
    return MustIncludeVfsShareAGpu(request.size, *other->second, id, other->first);
  }
  return Status::Ok();
}

int Offer::NumaFor(const State& state, const GpuNumbering& numbering, std::size_t gpu) const {
  const GpuOffer& o = gpus[gpu];
  const DeviceState* device = o.must     ? o.must_state
                              : o.lowest ? o.lowest_state
                                         : Find(state, numbering.bdf(gpu));
  return device == nullptr ? 0 : device->numa_node;
}

Result<Offer> OfferOf(const State& state, const GpuNumbering& numbering,
                      const PreferredRequest& request, const std::vector<std::string>& must) {
  GFP_RETURN_IF_ERROR(TwoMustOnOneGpu(state, request, must));
  Offer offer(numbering.size(), request.available.size(), must.size());
  for (const std::string& id : request.available) {
    const DeviceState* device = Find(state, id);
    offer.vfs |= device != nullptr && device->kind == DeviceKind::kVgpuVf;
    const auto gpu = numbering.OfBdf(GpuOfDevice(device, id));
    offer.available_ids.push_back({gpu, device == nullptr || device->parent_bdf.empty()});
    if (!gpu) continue;  // on no GPU of the mapping: in no partition
    GpuOffer& o = offer.gpus[*gpu];
    if (o.lowest == nullptr || id < *o.lowest) {
      o.lowest = &id;
      o.lowest_state = device;
    }
    offer.available.Add(0, *gpu);
  }
  for (const std::string& id : must) {
    const DeviceState* device = Find(state, id);
    offer.vfs |= device != nullptr && device->kind == DeviceKind::kVgpuVf;
    const auto gpu = numbering.OfBdf(GpuOfDevice(device, id));
    if (gpu) {
      offer.gpus[*gpu].must = &id;
      offer.gpus[*gpu].must_state = device;
    }
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
  if (!table.rows[row].mapped) {
    return PartitionNotOffered(p, DevicesOfPartition(state, p).missing_reason);
  }
  for (ModuleId module : p.physical_ids) {
    const std::size_t gpu = *numbering.OfModule(module);
    if (!offer.available.Has(0, gpu)) {
      return PartitionNotOffered(p, GpuNotAvailable(numbering.bdf(gpu), offer.vfs));
    }
  }
  if (p.degraded()) return PartitionNotOffered(p, Degraded(p));
  for (std::size_t i = 0; i < must.size(); ++i) {
    if (offer.must[i] && table.gpus.Has(row, *offer.must[i])) continue;
    return PartitionNotOffered(p, LacksMustInclude(offer.vfs, GpuOf(state, must[i]), must[i]));
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

// `nodes` is scratch space, kept by the caller across candidates so ranking allocates nothing.
Candidate RankCandidate(const State& state, const GpuNumbering& numbering, const Offer& offer,
                        const Table& table, std::size_t row, std::size_t size,
                        std::vector<int>* nodes) {
  Candidate c{row, table.rows[row].partition->id};
  nodes->clear();
  for (ModuleId module : table.rows[row].partition->physical_ids) {
    nodes->push_back(offer.NumaFor(state, numbering, *numbering.OfModule(module)));
  }
  std::sort(nodes->begin(), nodes->end());
  c.numa_nodes = static_cast<int>(std::unique(nodes->begin(), nodes->end()) - nodes->begin());
  c.lowest_numa = nodes->empty() ? 0 : nodes->front();
  for (std::size_t larger = 0; larger < table.rows.size(); ++larger) {
    if (table.rows[larger].partition->physical_ids.size() <= size || !table.rows[larger].usable)
      continue;
    if (table.gpus.Overlap(row, table.gpus, larger)) ++c.breaks;
  }
  return c;
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
  for (std::size_t i = 0; i < request.available.size(); ++i) {
    const std::string& id = request.available[i];
    const AvailableDevice& device = offer.available_ids[i];
    const auto gpu = device.whole_gpu ? device.gpu : numbering.OfBdf(id);  // its own BDF
    if (gpu && table.gpus.Has(row, *gpu) &&
        std::find(answer.begin(), answer.end(), id) == answer.end()) {
      answer.push_back(id);
    }
  }
  return answer;
}

}  // namespace

Result<std::vector<std::string>> PreferredByPartition(const State& state,
                                                      const PreferredRequest& request) {
  const std::vector<std::string> must = UniqueMustInclude(request.must_include);
  GFP_RETURN_IF_ERROR(CheckPartitionRequest(state, request, must));
  const GpuNumbering numbering(state);
  GFP_ASSIGN_OR_RETURN(const Offer offer, OfferOf(state, numbering, request, must));
  const Table table = TableOf(state, numbering, offer);

  std::optional<Candidate> best;
  std::vector<int> numa_nodes;           // not reserved: request.size is kubelet's, up to 2^31 - 1
  std::vector<std::size_t> not_offered;  // rows of the asked size; their reasons only on refusal
  std::size_t same_size = 0;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    if (table.rows[row].partition->physical_ids.size() != request.size) continue;
    ++same_size;
    const bool offerable = table.rows[row].usable && !table.rows[row].partition->degraded() &&
                           std::all_of(offer.must.begin(), offer.must.end(),
                                       [&](auto gpu) { return gpu && table.gpus.Has(row, *gpu); });
    if (!offerable) {
      not_offered.push_back(row);
      continue;
    }
    Candidate c = RankCandidate(state, numbering, offer, table, row, request.size, &numa_nodes);
    if (!best || c.rank() < best->rank()) best = c;
  }
  if (best) return AnswerFor(numbering, offer, table, best->row, request, must);
  std::vector<std::string> reasons;
  reasons.reserve(not_offered.size());
  for (std::size_t row : not_offered) {
    reasons.push_back(WhyNotOffered(state, numbering, offer, table, row, must));
  }
  return NoPartitionFits(state, request.size, same_size, reasons);
}

}  // namespace gfp::sm
