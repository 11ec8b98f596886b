#include "plugin/dra/claim_json.h"

#include "common/text_escape.h"
#include "plugin/dra/json_fields.h"

namespace gfp::plugin::dra {
namespace {

using Json = nlohmann::json;

std::string Text(const Json& object, const char* key) { return StringAt(object, {key}); }

const Json* Member(const Json& object, const char* key) { return FieldAt(object, {key}); }

std::string Quoted(const std::string& text) { return "\"" + EscapeAndTruncate(text, 128) + "\""; }

ClaimReading Problem(ClaimReading reading, ClaimProblem problem, const std::string& reason) {
  reading.problem = problem;
  reading.reason = "claim " + Quoted(reading.namespace_name + "/" + reading.name) + " " + reason;
  return reading;
}

// Our driver's results: request and BDF, or the problem with the first that is not ours to give.
ClaimReading ReadResults(ClaimReading reading, const Json& results, const ClaimExpectation& want) {
  if (!results.is_array()) {
    return Problem(std::move(reading), ClaimProblem::kMalformed, "has no list of results");
  }
  for (const Json& result : results) {
    if (Text(result, "driver") != want.driver) continue;
    const std::string pool = Text(result, "pool");
    const std::string device = Text(result, "device");
    if (pool != want.pool) {
      return Problem(std::move(reading), ClaimProblem::kOtherDevices,
                     "is allocated device " + Quoted(device) + " of pool " + Quoted(pool) +
                         ", not of this node's pool " + Quoted(want.pool));
    }
    auto bdf = want.bdf_of_device.find(device);
    if (bdf == want.bdf_of_device.end()) {
      return Problem(std::move(reading), ClaimProblem::kOtherDevices,
                     "is allocated device " + Quoted(device) + ", which this node does not have");
    }
    if (reading.devices.size() == kMaxClaimEntriesRead) break;
    reading.devices.push_back({Text(result, "request"), bdf->second});
  }
  if (reading.devices.empty()) {
    return Problem(std::move(reading), ClaimProblem::kNotAllocated,
                   "is allocated no device of driver " + want.driver);
  }
  return reading;
}

void ReadConsumers(ClaimReading& reading, const Json* reserved_for) {
  if (!reserved_for || !reserved_for->is_array()) return;
  for (const Json& consumer : *reserved_for) {
    if (Text(consumer, "resource") != "pods" || !Text(consumer, "apiGroup").empty()) continue;
    if (reading.reserved_for.size() == kMaxClaimEntriesRead) break;
    reading.reserved_for.push_back(reading.namespace_name + "/" + Text(consumer, "name"));
  }
}

}  // namespace

ClaimReading ReadClaim(const Json& claim, const ClaimExpectation& want) {
  ClaimReading reading;
  const Json* metadata = Member(claim, "metadata");
  if (!metadata || !metadata->is_object()) {
    return Problem(std::move(reading), ClaimProblem::kMalformed, "has no metadata");
  }
  reading.namespace_name = Text(*metadata, "namespace");
  reading.name = Text(*metadata, "name");
  if (const Json* annotations = Member(*metadata, "annotations")) {
    reading.pod_claim_name = Text(*annotations, "resource.kubernetes.io/pod-claim-name");
  }
  if (const std::string uid = Text(*metadata, "uid"); uid != want.uid) {
    return Problem(std::move(reading), ClaimProblem::kUidDiffers,
                   "has uid " + Quoted(uid) + ", not " + Quoted(want.uid) +
                       " (it was deleted and created again)");
  }
  const Json* status = Member(claim, "status");
  const Json* allocation = status ? Member(*status, "allocation") : nullptr;
  if (!allocation || !allocation->is_object()) {
    return Problem(std::move(reading), ClaimProblem::kNotAllocated, "is not allocated");
  }
  ReadConsumers(reading, Member(*status, "reservedFor"));
  const Json* devices = Member(*allocation, "devices");
  const Json* results = devices ? Member(*devices, "results") : nullptr;
  if (!results) return Problem(std::move(reading), ClaimProblem::kNotAllocated, "has no results");
  return ReadResults(std::move(reading), *results, want);
}

}  // namespace gfp::plugin::dra
