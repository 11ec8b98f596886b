// What DRA mode asks of the Kubernetes API server (SPEC §11), as one narrow interface: the
// plugin's only seam to it. `serve` plugs in HttpKubeApi (libcurl over adapters/apiserver);
// every test and world talks to the fake API server over real HTTPS through the same class.
//
// An answer is definite (a claim that is gone is std::nullopt) or an error: an unreachable,
// refusing (401/403) or failing (5xx) server never looks like "gone".
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace gfp::plugin::dra_mode {

struct SliceList {
  std::string resource_version;
  std::vector<nlohmann::json> items;
};

// When set, a call (its retries included) ends by then.
using ApiDeadline = std::optional<std::chrono::steady_clock::time_point>;

class KubeApi {
 public:
  virtual ~KubeApi() = default;

  // GET the ResourceClaim; std::nullopt when the API server answers 404.
  virtual Result<std::optional<nlohmann::json>> GetClaim(const std::string& namespace_name,
                                                         const std::string& name,
                                                         ApiDeadline deadline) = 0;
  // metadata.uid of the Node (the slice's owner).
  virtual Result<std::string> GetNodeUid(const std::string& node) = 0;
  // Our slices: fieldSelector spec.nodeName=<node>,spec.driver=<driver>.
  virtual Result<SliceList> ListSlices(const std::string& node, const std::string& driver) = 0;
  // The created or updated object as the server returns it. An update with a stale
  // resourceVersion fails with kAlreadyExists (409 Conflict): relist and try again.
  virtual Result<nlohmann::json> CreateSlice(const nlohmann::json& slice) = 0;
  virtual Result<nlohmann::json> UpdateSlice(const nlohmann::json& slice) = 0;
  // Deletes the slice only while it is the object listed: DeleteOptions' preconditions carry
  // its uid (and resourceVersion when not empty), so one someone re-created (or changed) under
  // the same name meanwhile is not deleted: that fails with kAlreadyExists (409 Conflict).
  // A slice already gone is fine.
  virtual Status DeleteSlice(const std::string& name, const std::string& uid,
                             const std::string& resource_version) = 0;
};

}  // namespace gfp::plugin::dra_mode
