// GetPreferredAllocation as pure functions of the state.
//  - With Fabric Manager (SPEC §4.3): the GPUs of one whole, healthy partition of the asked size;
//    for SR-IOV vGPU VFs (SPEC §9), one available VF per GPU of such a partition, in its GPU order
//    (the must-include VF on its GPU, else the lowest BDF).
//  - Without: the Go plugin's NUMA algorithm, reproduced exactly (upstream-behaviour.md §1.12).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/state.h"

namespace gfp::sm {

struct PreferredRequest {
  std::vector<std::string> available;  // kubelet's order
  std::vector<std::string> must_include;
  std::size_t size = 0;
};

// Dispatches on state.fm_enabled.
Result<std::vector<std::string>> PreferredAllocation(const State& state,
                                                     const PreferredRequest& request);

Result<std::vector<std::string>> PreferredByPartition(const State& state,
                                                      const PreferredRequest& request);

Result<std::vector<std::string>> PreferredByNuma(const State& state,
                                                 const PreferredRequest& request);

}  // namespace gfp::sm
