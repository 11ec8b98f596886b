// KubeApi over HTTPS: adapters/apiserver's ApiClient (libcurl) with the paths and answers of
// resource.k8s.io/v1 and core/v1 (SPEC §11). A definite answer is a 2xx or a 404; anything else
// is an error naming the request and the server's message, so no caller mistakes an outage or
// a missing RBAC rule for "gone".
#pragma once

#include "adapters/apiserver/api_client.h"
#include "plugin/dra_mode/kube_api.h"

namespace gfp::plugin::dra_mode {

class HttpKubeApi : public KubeApi {
 public:
  explicit HttpKubeApi(adapters::apiserver::ApiClient& client) : client_(client) {}

  Result<std::optional<nlohmann::json>> GetClaim(const std::string& namespace_name,
                                                 const std::string& name,
                                                 ApiDeadline deadline) override;
  Result<std::string> GetNodeUid(const std::string& node) override;
  Result<SliceList> ListSlices(const std::string& node, const std::string& driver) override;
  Result<nlohmann::json> CreateSlice(const nlohmann::json& slice) override;
  Result<nlohmann::json> UpdateSlice(const nlohmann::json& slice) override;
  Status DeleteSlice(const std::string& name, const std::string& uid,
                     const std::string& resource_version) override;

 private:
  // The answer's JSON when its code is 2xx (or 404 with `not_found_ok`: then null JSON).
  Result<nlohmann::json> Send(const adapters::apiserver::ApiCall& call, bool not_found_ok = false,
                              ApiDeadline deadline = std::nullopt);

  adapters::apiserver::ApiClient& client_;
};

// The collection path of ResourceSlices and the field selector of this node's and driver's.
inline constexpr const char* kSlicesPath = "/apis/resource.k8s.io/v1/resourceslices";
std::string SliceFieldSelector(const std::string& node, const std::string& driver);
// The DELETE body: DeleteOptions whose preconditions name the object (empty fields left out).
nlohmann::json DeletePreconditions(const std::string& uid, const std::string& resource_version);

}  // namespace gfp::plugin::dra_mode
