// The partition picker as it was written first (stop 31 and before): strings and std::maps all
// the way. Slow (about 13 us a call on the 16-GPU node) but plain, so it is kept as the oracle of
// the numbered-GPU picker in src/statemachine/preferred_partition.cc: the property test
// preferred_property_test.cc asks both the same questions and wants the same answers, word for
// word. Not linked into the plugin.
#include "preferred_reference.h"

#include <algorithm>
#include <map>
#include <set>

#include "statemachine/preferred_checks.h"

namespace gfp::sm {
namespace {

struct Candidate {
  PartitionId id = 0;
  std::vector<Bdf> gpus;
  int breaks = 0;      // still-whole, larger free partitions this choice would break
  int numa_nodes = 0;  // distinct NUMA nodes spanned
  int lowest_numa = 0;

  auto rank() const { return std::tie(breaks, numa_nodes, lowest_numa, id); }
};

// Each GPU and the devices that stand for it: a whole GPU itself, or its available VFs (lowest
// BDF first). A VM gets one VF per GPU, the must-include one where there is one.
struct GpuDevices {
  bool vfs = false;
  std::map<Bdf, std::vector<std::string>> available;
  std::map<Bdf, std::string> must_on;

  // The device answered for `gpu`.
  std::string DeviceFor(const Bdf& gpu) const {
    if (auto m = must_on.find(gpu); m != must_on.end()) return m->second;
    auto a = available.find(gpu);
    return a == available.end() || a->second.empty() ? gpu : a->second.front();
  }
};

Result<GpuDevices> DevicesByGpu(const State& state, const PreferredRequest& request,
                                const std::vector<std::string>& must) {
  GpuDevices out;
  out.vfs = AnyVf(state, request.available) || AnyVf(state, request.must_include);
  for (const auto& id : request.available) out.available[GpuOf(state, id)].push_back(id);
  for (auto& [gpu, ids] : out.available) std::sort(ids.begin(), ids.end());
  for (const auto& id : must) {
    auto [other, fresh] = out.must_on.emplace(GpuOf(state, id), id);
    if (!fresh) {
      return MustIncludeVfsShareAGpu(request.size, other->second, id, other->first);
    }
  }
  return out;
}

// A partition resolved once: its GPUs and whether all of them are free.
struct Resolved {
  const PartitionState* partition;
  std::vector<Bdf> gpus;
  std::string unusable;  // why it cannot be offered; empty when it can
};

std::vector<Resolved> ResolvePartitions(const State& state, const GpuDevices& devices) {
  std::vector<Resolved> resolved;
  resolved.reserve(state.partitions.size());
  for (const auto& [pid, partition] : state.partitions) {
    Resolved r{&partition, {}, {}};
    PartitionDevices gpus = DevicesOfPartition(state, partition);
    if (!gpus.missing_reason.empty()) {
      r.unusable = gpus.missing_reason;
    } else {
      r.gpus = std::move(gpus.bdfs);
      for (const Bdf& gpu : r.gpus) {
        if (!devices.available.count(gpu)) {
          r.unusable = GpuNotAvailable(gpu, devices.vfs);
          break;
        }
      }
    }
    resolved.push_back(std::move(r));
  }
  return resolved;
}

// Why a partition of the asked size cannot be offered; empty when it can. The text is built only
// for a refusal: an offerable partition costs no string.
std::string WhyNotOffered(const State& state, const Resolved& r, const GpuDevices& devices,
                          const std::vector<std::string>& must) {
  const PartitionState& p = *r.partition;
  if (!r.unusable.empty()) return PartitionNotOffered(p, r.unusable);
  if (p.degraded()) return PartitionNotOffered(p, Degraded(p));
  auto missing = std::find_if(must.begin(), must.end(), [&](const std::string& m) {
    return std::find(r.gpus.begin(), r.gpus.end(), GpuOf(state, m)) == r.gpus.end();
  });
  if (missing != must.end()) {
    return PartitionNotOffered(p, LacksMustInclude(devices.vfs, GpuOf(state, *missing), *missing));
  }
  return "";
}

// An offerable partition, ranked: larger free partitions it breaks, then NUMA spread.
Candidate RankCandidate(const State& state, const Resolved& r, const GpuDevices& devices,
                        const std::vector<Resolved>& resolved, std::size_t size) {
  Candidate c;
  c.id = r.partition->id;
  c.gpus = r.gpus;
  std::set<int> nodes;
  for (const Bdf& gpu : c.gpus) {
    auto device = state.devices.find(devices.DeviceFor(gpu));
    nodes.insert(device == state.devices.end() ? 0 : device->second.numa_node);
  }
  c.numa_nodes = static_cast<int>(nodes.size());
  c.lowest_numa = nodes.empty() ? 0 : *nodes.begin();
  for (const Resolved& larger : resolved) {
    if (larger.partition->physical_ids.size() <= size || !larger.unusable.empty()) continue;
    const bool overlaps = std::any_of(c.gpus.begin(), c.gpus.end(), [&](const Bdf& g) {
      return std::find(larger.gpus.begin(), larger.gpus.end(), g) != larger.gpus.end();
    });
    if (overlaps) ++c.breaks;
  }
  return c;
}

// The devices answered for the chosen partition: one VF per GPU in the partition's GPU order
// (the order FM is given them in), or the must-include GPUs then the others in kubelet's order.
std::vector<std::string> AnswerFor(const Candidate& best, const GpuDevices& devices,
                                   const PreferredRequest& request,
                                   const std::vector<std::string>& must) {
  if (devices.vfs) {
    std::vector<std::string> answer;
    for (const Bdf& gpu : best.gpus) answer.push_back(devices.DeviceFor(gpu));
    return answer;
  }
  std::vector<std::string> answer = must;
  for (const std::string& id : request.available) {
    if (std::find(best.gpus.begin(), best.gpus.end(), id) != best.gpus.end() &&
        std::find(answer.begin(), answer.end(), id) == answer.end()) {
      answer.push_back(id);
    }
  }
  return answer;
}

}  // namespace

Result<std::vector<std::string>> ReferencePreferredByPartition(const State& state,
                                                               const PreferredRequest& request) {
  const std::vector<std::string> must = UniqueMustInclude(request.must_include);
  GFP_RETURN_IF_ERROR(CheckPartitionRequest(state, request, must));
  GFP_ASSIGN_OR_RETURN(const GpuDevices devices, DevicesByGpu(state, request, must));
  const std::vector<Resolved> resolved = ResolvePartitions(state, devices);

  std::vector<Candidate> candidates;
  std::vector<std::string> reasons;
  std::size_t same_size = 0;
  for (const Resolved& r : resolved) {
    if (r.partition->physical_ids.size() != request.size) continue;
    ++same_size;
    std::string why_not = WhyNotOffered(state, r, devices, must);
    if (!why_not.empty()) {
      reasons.push_back(std::move(why_not));
      continue;
    }
    candidates.push_back(RankCandidate(state, r, devices, resolved, request.size));
  }
  if (candidates.empty()) return NoPartitionFits(state, request.size, same_size, reasons);

  const Candidate& best =
      *std::min_element(candidates.begin(), candidates.end(),
                        [](const Candidate& x, const Candidate& y) { return x.rank() < y.rank(); });
  return AnswerFor(best, devices, request, must);
}

}  // namespace gfp::sm
