// ObjectStore's ResourceSlice operations: what kube-apiserver does on create, update, delete and
// list, with the checks the plugin's requests meet (required fields, names, resourceVersions).
#include <random>

#include "sim/apiserver/api_status.h"
#include "sim/apiserver/object_store.h"

namespace gfp::apisim {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* pointer) {
  return object.value(json::json_pointer(pointer), std::string());
}

// generateName's suffix: 5 characters of [a-z0-9].
std::string RandomSuffix() {
  static thread_local std::mt19937 random{std::random_device{}()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::uniform_int_distribution<int> pick(0, sizeof kAlphabet - 2);
  std::string suffix;
  for (int i = 0; i < 5; ++i) suffix += kAlphabet[pick(random)];
  return suffix;
}

// The 422 Invalid answer for the first required field that is missing, if any.
std::optional<Answer> MissingField(const json& slice, const std::string& name) {
  for (const char* field : {"/spec/driver", "/spec/pool/name", "/spec/nodeName"}) {
    if (!StringAt(slice, field).empty()) continue;
    std::string path = std::string(field).substr(1);
    for (char& c : path) c = c == '/' ? '.' : c;
    return Answer{422, StatusObject(422,
                                    "ResourceSlice.resource.k8s.io \"" + name +
                                        "\" is invalid: " + path + ": Required value",
                                    name, "resourceslices")};
  }
  return std::nullopt;
}

Answer Conflict(const std::string& name, const std::string& why) {
  return {409, StatusObject(409,
                            "Operation cannot be fulfilled on resourceslices.resource.k8s.io \"" +
                                name + "\": " + why,
                            name, "resourceslices")};
}

}  // namespace

Answer ObjectStore::ListSlices(const FieldSelector& selector) const {
  std::lock_guard lock(mutex_);
  json items = json::array();
  for (const auto& [name, slice] : slices_) {
    if (selector.Matches(slice)) items.push_back(slice);
  }
  return {200,
          {{"kind", "ResourceSliceList"},
           {"apiVersion", "resource.k8s.io/v1"},
           {"metadata", {{"resourceVersion", std::to_string(resource_version_)}}},
           {"items", std::move(items)}}};
}

Answer ObjectStore::GetSlice(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = slices_.find(name);
  if (it == slices_.end()) return {404, NotFoundStatus("resourceslices", name)};
  return {200, it->second};
}

Answer ObjectStore::CreateSlice(json slice) {
  if (!slice.is_object()) return {400, StatusObject(400, "the body is not a JSON object")};
  std::lock_guard lock(mutex_);
  std::string name = StringAt(slice, "/metadata/name");
  const std::string generate = StringAt(slice, "/metadata/generateName");
  if (name.empty() && generate.empty()) {
    return {422, StatusObject(422,
                              "ResourceSlice.resource.k8s.io \"\" is invalid: metadata.name: "
                              "Required value: name or generateName is required")};
  }
  if (name.empty()) {
    do name = generate + RandomSuffix();
    while (slices_.count(name) != 0);
  }
  if (auto missing = MissingField(slice, name)) return *missing;
  if (slices_.count(name) != 0) {
    json status =
        StatusObject(409, "resourceslices.resource.k8s.io \"" + name + "\" already exists", name,
                     "resourceslices");
    status["reason"] = "AlreadyExists";  // a 409 that is not a Conflict
    return {409, std::move(status)};
  }
  slice["kind"] = "ResourceSlice";
  slice["apiVersion"] = "resource.k8s.io/v1";
  auto& meta = slice["metadata"];
  meta["name"] = name;
  meta["uid"] = NewUid();
  meta["creationTimestamp"] = NowTimestamp();
  meta["generation"] = 1;
  meta["resourceVersion"] = NextVersionLocked();
  slices_[name] = slice;
  RecordLocked("ADDED", slice);
  return {201, slice};
}

Answer ObjectStore::UpdateSlice(const std::string& name, json slice) {
  if (!slice.is_object()) return {400, StatusObject(400, "the body is not a JSON object")};
  if (StringAt(slice, "/metadata/name") != name) {
    return {400, StatusObject(400, "the name of the object (" + StringAt(slice, "/metadata/name") +
                                       ") does not match the name on the URL (" + name + ")")};
  }
  std::lock_guard lock(mutex_);
  const auto it = slices_.find(name);
  if (it == slices_.end()) return {404, NotFoundStatus("resourceslices", name)};
  if (auto missing = MissingField(slice, name)) return *missing;
  const std::string given = StringAt(slice, "/metadata/resourceVersion");
  const json& stored = it->second["metadata"];
  if (!given.empty() && given != stored["resourceVersion"].get<std::string>()) {
    return Conflict(name,
                    "the object has been modified; please apply your changes to the latest "
                    "version and try again");
  }
  auto& meta = slice["metadata"];
  meta["uid"] = stored["uid"];
  meta["creationTimestamp"] = stored["creationTimestamp"];
  meta["generation"] = stored.value("generation", 1) + (slice["spec"] != it->second["spec"]);
  meta["resourceVersion"] = NextVersionLocked();
  slice["kind"] = "ResourceSlice";
  slice["apiVersion"] = "resource.k8s.io/v1";
  it->second = slice;
  RecordLocked("MODIFIED", slice);
  return {200, slice};
}

Answer ObjectStore::DeleteSlice(const std::string& name, const json& preconditions) {
  std::lock_guard lock(mutex_);
  const auto it = slices_.find(name);
  if (it == slices_.end()) return {404, NotFoundStatus("resourceslices", name)};
  // kube-apiserver's words for a precondition that does not hold.
  for (const auto& [field, words] : {std::pair<std::string, std::string>{"uid", "UID"},
                                     {"resourceVersion", "ResourceVersion"}}) {
    const std::string wanted =
        preconditions.is_object() ? StringAt(preconditions, ("/" + field).c_str()) : "";
    const std::string actual = StringAt(it->second, ("/metadata/" + field).c_str());
    if (wanted.empty() || wanted == actual) continue;
    return Conflict(name, "Precondition failed: " + words + " in precondition: " + wanted + ", " +
                              words + " in object meta: " + actual);
  }
  json slice = std::move(it->second);
  slices_.erase(it);
  slice["metadata"]["resourceVersion"] = NextVersionLocked();
  RecordLocked("DELETED", slice);
  return {200, slice};
}

std::vector<json> ObjectStore::Slices() const {
  std::lock_guard lock(mutex_);
  std::vector<json> all;
  for (const auto& [name, slice] : slices_) all.push_back(slice);
  return all;
}

int ObjectStore::WipeSlices(const std::string& node) {
  std::lock_guard lock(mutex_);
  int wiped = 0;
  for (auto it = slices_.begin(); it != slices_.end();) {
    if (StringAt(it->second, "/spec/nodeName") != node) {
      ++it;
      continue;
    }
    json slice = std::move(it->second);
    it = slices_.erase(it);
    slice["metadata"]["resourceVersion"] = NextVersionLocked();
    RecordLocked("DELETED", slice);
    ++wiped;
  }
  return wiped;
}

Status ObjectStore::ModifySlice(const std::string& name, const std::function<void(json&)>& edit) {
  std::lock_guard lock(mutex_);
  const auto it = slices_.find(name);
  if (it == slices_.end()) return NotFound("fake API server: no ResourceSlice " + name);
  edit(it->second);
  it->second["metadata"]["name"] = name;
  it->second["metadata"]["resourceVersion"] = NextVersionLocked();
  RecordLocked("MODIFIED", it->second);
  return Status::Ok();
}

}  // namespace gfp::apisim
