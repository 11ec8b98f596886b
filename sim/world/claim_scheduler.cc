#include "sim/world/claim_scheduler.h"

#include <map>

namespace gfp::simworld {
namespace {

using Json = nlohmann::json;

// partition<N> value -> the names of our devices that carry it.
std::map<std::int64_t, std::vector<std::string>> Groups(const std::vector<Json>& slices,
                                                        const std::string& driver,
                                                        const std::string& node, std::size_t n) {
  std::map<std::int64_t, std::vector<std::string>> groups;
  const std::string attribute = "partition" + std::to_string(n);
  for (const Json& slice : slices) {
    const Json& spec = slice.at("spec");
    if (spec.at("driver") != driver || spec.at("pool").at("name") != node) continue;
    for (const Json& device : spec.at("devices")) {
      const Json& attributes = device.at("attributes");
      if (!attributes.contains(attribute)) continue;
      groups[attributes.at(attribute).at("int").get<std::int64_t>()].push_back(device.at("name"));
    }
  }
  return groups;
}

}  // namespace

Result<Json> ClaimScheduler::Allocate(const ClaimRequest& request,
                                      const std::vector<Json>& slices) {
  std::vector<std::string> chosen;
  try {
    for (auto& [value, names] : Groups(slices, driver_, node_, request.gpus)) {
      std::vector<std::string> free;
      for (const auto& name : names) {
        if (!allocated_.count(name)) free.push_back(name);
      }
      if (free.size() >= request.gpus) {
        chosen.assign(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(request.gpus));
        break;
      }
    }
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string("a published slice is not as expected: ") + e.what());
  }
  if (chosen.empty()) {
    return FailedPrecondition("no " + std::to_string(request.gpus) +
                              " free GPUs share one partition" + std::to_string(request.gpus));
  }
  Json results = Json::array();
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    results.push_back({{"request", "gpu" + std::to_string(i)},
                       {"driver", driver_},
                       {"pool", node_},
                       {"device", chosen[i]}});
    allocated_.insert(chosen[i]);
  }
  Json metadata = {{"namespace", request.namespace_name}, {"name", request.name}};
  if (!request.uid.empty()) metadata["uid"] = request.uid;
  if (!request.pod_claim_name.empty()) {
    metadata["annotations"] = {{"resource.kubernetes.io/pod-claim-name", request.pod_claim_name}};
  }
  return Json{
      {"apiVersion", "resource.k8s.io/v1"},
      {"kind", "ResourceClaim"},
      {"metadata", metadata},
      {"status",
       {{"allocation", {{"devices", {{"results", results}}}}},
        {"reservedFor",
         Json::array({{{"resource", "pods"}, {"name", request.pod}, {"uid", request.pod}}})}}}};
}

void ClaimScheduler::Release(const Json& claim) {
  const Json* results = &claim;
  for (const char* key : {"status", "allocation", "devices", "results"}) {
    if (!results->is_object() || !results->contains(key)) return;
    results = &(*results)[key];
  }
  for (const Json& result : *results) {
    if (result.contains("device") && result["device"].is_string()) {
      allocated_.erase(result["device"].get<std::string>());
    }
  }
}

}  // namespace gfp::simworld
