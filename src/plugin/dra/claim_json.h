// A ResourceClaim as the API server returns it (resource.k8s.io/v1), read into what
// NodePrepareResources journals: pure, no I/O. Only the fields SPEC §11 uses are read; the
// state machine checks their spelling (k8s_names) before anything reaches a path or the journal.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gfp::plugin::dra {

// What the claim must be to be prepared here.
struct ClaimExpectation {
  std::string uid;     // kubelet's uid for it: a claim re-created under the same name differs
  std::string driver;  // our results are those with this spec.driver
  std::string pool;    // this node's pool: the node name
  // Device name (gpu-0000-1b-00-0) -> BDF of every whole GPU of the node.
  std::map<std::string, std::string> bdf_of_device;
};

// Why a claim cannot be prepared here; reconciliation unprepares for the first three only.
enum class ClaimProblem {
  kNone,
  kUidDiffers,    // the name now holds another claim
  kNotAllocated,  // no status.allocation, or no result of our driver
  kOtherDevices,  // a result of our driver names another pool or a device we do not have
  kMalformed,     // not a ResourceClaim we can read
};

struct ClaimDeviceResult {
  std::string request;
  std::string bdf;
};

struct ClaimReading {
  ClaimProblem problem = ClaimProblem::kNone;
  std::string reason;  // names the claim and what is wrong; empty when kNone
  std::string namespace_name;
  std::string name;
  std::vector<ClaimDeviceResult> devices;  // our results, in the allocation's order
  std::vector<std::string> reserved_for;   // "namespace/name" of the pods in status.reservedFor
  std::string pod_claim_name;              // annotation resource.kubernetes.io/pod-claim-name
};

ClaimReading ReadClaim(const nlohmann::json& claim, const ClaimExpectation& want);

// The most results or consumers read from one claim: what the state machine accepts, plus one
// so that it still sees (and names) a claim that has too many.
inline constexpr std::size_t kMaxClaimEntriesRead = 257;

}  // namespace gfp::plugin::dra
