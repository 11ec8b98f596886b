#include "sim/apiserver/object_store.h"

#include <cstdio>
#include <ctime>
#include <random>

#include "sim/apiserver/api_status.h"

namespace gfp::apisim {

std::string NewUid() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  const std::uint64_t a = random();
  const std::uint64_t b = random();
  char text[37];
  std::snprintf(text, sizeof text, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return text;
}

std::string NowTimestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string ObjectStore::NextVersionLocked() { return std::to_string(++resource_version_); }

void ObjectStore::RecordLocked(const std::string& type, const nlohmann::json& object) {
  history_.push_back({resource_version_, type, object});
  while (history_.size() > kMaxHistory) {
    compacted_through_ = history_.front().resource_version;
    history_.pop_front();
  }
  changed_.notify_all();
}

std::string ObjectStore::PutNode(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto& node = nodes_[name];
  if (node.is_null()) {
    node = {
        {"kind", "Node"},
        {"apiVersion", "v1"},
        {"metadata", {{"name", name}, {"uid", NewUid()}, {"creationTimestamp", NowTimestamp()}}},
        {"spec", nlohmann::json::object()}};
  }
  node["metadata"]["resourceVersion"] = NextVersionLocked();
  return node["metadata"]["uid"].get<std::string>();
}

Answer ObjectStore::GetNode(const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = nodes_.find(name);
  if (it == nodes_.end()) return {404, NotFoundStatus("nodes", name)};
  return {200, it->second};
}

Result<nlohmann::json> ObjectStore::PutClaim(nlohmann::json claim) {
  const auto ns = claim.value(nlohmann::json::json_pointer("/metadata/namespace"), std::string());
  const auto name = claim.value(nlohmann::json::json_pointer("/metadata/name"), std::string());
  if (ns.empty() || name.empty()) {
    return InvalidArgument("fake API server: a claim needs metadata.namespace and metadata.name");
  }
  std::lock_guard lock(mutex_);
  claim["kind"] = "ResourceClaim";
  claim["apiVersion"] = "resource.k8s.io/v1";
  auto& meta = claim["metadata"];
  if (!meta.contains("uid")) meta["uid"] = NewUid();
  if (!meta.contains("creationTimestamp")) meta["creationTimestamp"] = NowTimestamp();
  meta["resourceVersion"] = NextVersionLocked();
  claims_[ns + "/" + name] = claim;
  return claim;
}

bool ObjectStore::DeleteClaim(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mutex_);
  if (claims_.erase(ns + "/" + name) == 0) return false;
  NextVersionLocked();
  return true;
}

Answer ObjectStore::GetClaim(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mutex_);
  const auto it = claims_.find(ns + "/" + name);
  if (it == claims_.end()) return {404, NotFoundStatus("resourceclaims", name)};
  return {200, it->second};
}

void ObjectStore::CompactHistory() {
  std::lock_guard lock(mutex_);
  history_.clear();
  compacted_through_ = resource_version_;
}

std::uint64_t ObjectStore::CurrentResourceVersion() const {
  std::lock_guard lock(mutex_);
  return resource_version_;
}

ObjectStore::WatchRead ObjectStore::EventsAfter(std::uint64_t after, std::chrono::milliseconds wait,
                                                std::vector<WatchEvent>& out) const {
  std::unique_lock lock(mutex_);
  if (after < compacted_through_) return WatchRead::kExpired;
  const auto newer = [&] { return !history_.empty() && history_.back().resource_version > after; };
  if (!changed_.wait_for(lock, wait, newer)) return WatchRead::kNothingYet;
  if (after < compacted_through_) return WatchRead::kExpired;  // compacted while waiting
  for (const WatchEvent& e : history_) {
    if (e.resource_version > after) out.push_back(e);
  }
  return WatchRead::kEvents;
}

std::uint64_t ObjectStore::Snapshot(std::vector<WatchEvent>& out) const {
  std::lock_guard lock(mutex_);
  for (const auto& [name, slice] : slices_) out.push_back({resource_version_, "ADDED", slice});
  return resource_version_;
}

}  // namespace gfp::apisim
