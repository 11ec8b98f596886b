// What GetPreferredAllocation's pickers share: the request checks and the refusal texts, so that
// kubelet's log reads the same whichever picker answered (and the partition picker's test oracle,
// tests/property/statemachine/preferred_reference.cc, words its refusals alike).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/preferred.h"
#include "statemachine/state.h"

namespace gfp::sm {

// More must-include devices than the asked size (kubelet's wording).
Status TooManyMustInclude(std::size_t must, std::size_t size);

// kubelet's must-include list without repeats, first occurrence kept.
std::vector<std::string> UniqueMustInclude(const std::vector<std::string>& ids);

// The checks that need no partition: the size, the must-include count, a known table.
Status CheckPartitionRequest(const State& state, const PreferredRequest& request,
                             const std::vector<std::string>& must);

Status MustIncludeVfsShareAGpu(std::size_t size, const std::string& first,
                               const std::string& second, const Bdf& gpu);

// Why one partition of the asked size is not offered, as "partition N: <why>".
std::string PartitionNotOffered(const PartitionState& partition, const std::string& why);
std::string GpuNotAvailable(const Bdf& gpu, bool vfs);
std::string Degraded(const PartitionState& partition);
std::string LacksMustInclude(bool vfs, const Bdf& gpu, const std::string& must);

// The refusal when no partition fits, with each same-size partition's reason.
Status NoPartitionFits(const State& state, std::size_t size, std::size_t same_size,
                       const std::vector<std::string>& reasons);

}  // namespace gfp::sm
