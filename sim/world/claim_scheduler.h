// A stand-in for kube-scheduler's DRA allocator, written apart from the product: it allocates a
// claim made from one of deploy/dra's templates (fm-<N>gpu: requests gpu0 … gpu<N-1>, one device
// each, matchAttribute <driver>/partition<N>) over the devices of the published ResourceSlices,
// as the real allocator would: N devices of our driver whose partition<N> attribute holds one
// value, none of them allocated to another claim. Lowest value first, so runs are reproducible.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::simworld {

struct ClaimRequest {
  std::string namespace_name = "vms";
  std::string name;            // vm-a-gpus
  std::string uid;             // left to the API server when empty
  std::size_t gpus = 1;        // N of fm-<N>gpu
  std::string pod;             // the virt-launcher pod in status.reservedFor
  std::string pod_claim_name;  // the template's claim name in the pod (annotation), if any
};

class ClaimScheduler {
 public:
  ClaimScheduler(std::string driver, std::string node)
      : driver_(std::move(driver)), node_(std::move(node)) {}

  // The claim object with status.allocation and status.reservedFor, or FailedPrecondition when
  // no N free devices share a partition<N> value (the scheduler would leave the pod pending).
  Result<nlohmann::json> Allocate(const ClaimRequest& request,
                                  const std::vector<nlohmann::json>& slices);

  // The claim's devices are free again (its pod and claim were deleted).
  void Release(const nlohmann::json& claim);
  const std::set<std::string>& allocated() const { return allocated_; }

 private:
  std::string driver_;
  std::string node_;
  std::set<std::string> allocated_;  // device names
};

}  // namespace gfp::simworld
