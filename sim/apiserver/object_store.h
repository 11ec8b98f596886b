// The fake API server's objects: Nodes, ResourceClaims and ResourceSlices under one global
// resourceVersion counter (string numbers, as etcd gives), and the ResourceSlice event history
// that watches read. Thread-safe; every method takes the one lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/apiserver/field_selector.h"

namespace gfp::apisim {

// What a request gets: the HTTP code and the JSON body (the object, a list or a Status).
struct Answer {
  int code = 200;
  nlohmann::json body;
};

struct WatchEvent {
  std::uint64_t resource_version = 0;
  std::string type;  // ADDED, MODIFIED, DELETED
  nlohmann::json object;
};

class ObjectStore {
 public:
  // Events kept for watches; older ones are compacted away (watches from before get 410).
  static constexpr std::size_t kMaxHistory = 10000;

  std::string PutNode(const std::string& name);  // the node's uid (kept if it exists)
  Answer GetNode(const std::string& name) const;
  Result<nlohmann::json> PutClaim(nlohmann::json claim);
  bool DeleteClaim(const std::string& ns, const std::string& name);
  Answer GetClaim(const std::string& ns, const std::string& name) const;

  Answer ListSlices(const FieldSelector& selector) const;
  Answer GetSlice(const std::string& name) const;
  Answer CreateSlice(nlohmann::json slice);
  Answer UpdateSlice(const std::string& name, nlohmann::json slice);
  // `preconditions` (DeleteOptions'): a uid or resourceVersion that differs gives 409.
  Answer DeleteSlice(const std::string& name,
                     const nlohmann::json& preconditions = nlohmann::json::object());
  std::vector<nlohmann::json> Slices() const;
  int WipeSlices(const std::string& node);  // how many were deleted
  Status ModifySlice(const std::string& name, const std::function<void(nlohmann::json&)>& edit);

  // Forgets the event history: watches from any resourceVersion before now get 410 Expired.
  void CompactHistory();
  std::uint64_t CurrentResourceVersion() const;

  enum class WatchRead { kEvents, kNothingYet, kExpired };
  // The events after `after` (appended to `out`), waiting up to `wait` for one to happen.
  WatchRead EventsAfter(std::uint64_t after, std::chrono::milliseconds wait,
                        std::vector<WatchEvent>& out) const;
  // The current slices as ADDED events and the resourceVersion they were read at (a watch
  // without a resourceVersion starts with them, as kube-apiserver's does).
  std::uint64_t Snapshot(std::vector<WatchEvent>& out) const;

 private:
  std::string NextVersionLocked();
  void RecordLocked(const std::string& type, const nlohmann::json& object);

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::uint64_t resource_version_ = 0;
  std::uint64_t compacted_through_ = 0;  // watches from before this are expired
  std::map<std::string, nlohmann::json> nodes_;
  std::map<std::string, nlohmann::json> claims_;  // "ns/name"
  std::map<std::string, nlohmann::json> slices_;
  std::deque<WatchEvent> history_;
};

// A random lowercase RFC 4122 version-4 UUID, as metadata.uid.
std::string NewUid();
// Now as RFC 3339 in UTC, as metadata.creationTimestamp.
std::string NowTimestamp();

}  // namespace gfp::apisim
