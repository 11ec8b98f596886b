// An API server behind the KubeApi seam, for the unit tests of DRA mode's jobs: claims and slices
// in maps, a resourceVersion and uid per object, 409 on a stale update or a delete whose
// preconditions fail, and switches for an unreachable server. ListSlices ignores the field
// selector (as a careless server would): every slice in the map comes back. The HTTPS path
// (HttpKubeApi against the fake API server) has its own tests.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "plugin/dra_mode/kube_api.h"

namespace gfp::plugin::dra_mode {

class ScriptedApi : public KubeApi {
 public:
  using Json = nlohmann::json;
  std::map<std::string, Json> claims;  // "ns/name" -> object
  std::map<std::string, Json> slices;  // name -> object
  bool unreachable = false;
  int claim_gets = 0;
  int slice_writes = 0;              // creates, updates and deletes
  std::vector<std::string> deleted;  // names, in order
  int slice_lists = 0;

  Result<std::optional<Json>> GetClaim(const std::string& ns, const std::string& name,
                                       ApiDeadline) override {
    ++claim_gets;
    if (unreachable) return Unavailable("connection refused");
    auto it = claims.find(ns + "/" + name);
    if (it == claims.end()) return std::optional<Json>();
    return std::optional<Json>(it->second);
  }
  Result<std::string> GetNodeUid(const std::string&) override {
    if (unreachable) return Unavailable("connection refused");
    return std::string("node-uid");
  }
  Result<SliceList> ListSlices(const std::string&, const std::string&) override {
    ++slice_lists;
    if (unreachable) return Unavailable("connection refused");
    SliceList list{std::to_string(version_), {}};
    for (const auto& [name, slice] : slices) list.items.push_back(slice);
    return list;
  }
  Result<Json> CreateSlice(const Json& slice) override {
    if (unreachable) return Unavailable("connection refused");
    ++slice_writes;
    Json created = slice;
    const std::string name =
        slice["metadata"]["generateName"].get<std::string>() + std::to_string(++names_);
    created["metadata"].erase("generateName");
    created["metadata"]["name"] = name;
    created["metadata"]["resourceVersion"] = std::to_string(++version_);
    created["metadata"]["uid"] = "slice-uid-" + std::to_string(names_);
    slices[name] = created;
    return created;
  }
  Result<Json> UpdateSlice(const Json& slice) override {
    if (unreachable) return Unavailable("connection refused");
    ++slice_writes;
    const std::string name = slice["metadata"]["name"];
    auto it = slices.find(name);
    if (it == slices.end()) return NotFound("resourceslices " + name + " not found");
    if (it->second["metadata"]["resourceVersion"] != slice["metadata"]["resourceVersion"]) {
      return Status(ErrorCode::kAlreadyExists, "409 Conflict on resourceslices " + name);
    }
    Json updated = slice;
    updated["metadata"]["resourceVersion"] = std::to_string(++version_);
    it->second = updated;
    return updated;
  }
  Status DeleteSlice(const std::string& name, const std::string& uid,
                     const std::string& resource_version) override {
    if (unreachable) return Unavailable("connection refused");
    ++slice_writes;
    auto it = slices.find(name);
    if (it == slices.end()) return Status::Ok();
    const Json& meta = it->second["metadata"];
    if ((!uid.empty() && meta.value("uid", "") != uid) ||
        (!resource_version.empty() && meta.value("resourceVersion", "") != resource_version)) {
      return Status(ErrorCode::kAlreadyExists, "409 Conflict: precondition failed on " + name);
    }
    deleted.push_back(name);
    slices.erase(it);
    return Status::Ok();
  }
  // Someone else writes the slice: its resourceVersion moves on.
  void Touch(const std::string& name, const std::function<void(Json&)>& edit) {
    edit(slices.at(name));
    slices.at(name)["metadata"]["resourceVersion"] = std::to_string(++version_);
  }

 private:
  int version_ = 100;
  int names_ = 0;
};

}  // namespace gfp::plugin::dra_mode
