// A cache of one collection of the API server kept by list, then watch (SPEC §11: the node's
// ResourceSlices are watched so a wiped slice is recreated). Lists, watches from the list's
// resourceVersion, applies ADDED/MODIFIED/DELETED, resumes from the last resourceVersion seen
// when a stream ends, relists when the server says that version is gone (410, as an HTTP answer
// or an ERROR event), and waits the client's backoff after failures. Runs on its own thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "adapters/apiserver/api_client.h"
#include "common/status.h"

namespace gfp::adapters::apiserver {

struct ListWatchOptions {
  std::string resource;  // "resourceslices": for logs, metrics and RBAC messages
  std::string path;      // the collection, no query: "/apis/resource.k8s.io/v1/resourceslices"
  std::string field_selector;  // "spec.nodeName=node-1"; empty: none
  std::string label_selector;  // empty: none
};

// Objects by name ("namespace/name" for namespaced objects).
using ObjectsByName = std::map<std::string, nlohmann::json>;

class ListWatcher {
 public:
  using OnChange = std::function<void(const ObjectsByName& objects)>;

  // `client` must outlive the watcher. on_change runs on the watcher's thread after every
  // change and every (re)list, with the whole collection; it must not call Stop() (a thread
  // cannot join itself). Failures are logged at warning level once per change of reason.
  ListWatcher(ApiClient& client, ListWatchOptions options, OnChange on_change);
  ~ListWatcher();
  ListWatcher(const ListWatcher&) = delete;
  ListWatcher& operator=(const ListWatcher&) = delete;

  void Start();
  // Ends the watch and any backoff promptly and joins the thread. Idempotent.
  void Stop();

  // For tests and logs.
  int lists() const { return lists_.load(); }
  int watches() const { return watches_.load(); }
  std::string resource_version() const;

 private:
  void Run();
  Status List();
  Status WatchOnce(bool* relist);
  // Applies one event; false ends the stream (relist or error in *error).
  bool Apply(const WatchEvent& event, bool* relist, Status* error);
  std::string Query(bool watch) const;
  void SetResourceVersion(const nlohmann::json& metadata);

  ApiClient& client_;
  ListWatchOptions options_;
  OnChange on_change_;
  StopFlag stop_;
  std::thread thread_;
  ObjectsByName cache_;  // the watcher thread's only
  mutable std::mutex rv_mu_;
  std::string resource_version_;
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
};

// The key of an object in ObjectsByName, empty when it has no metadata.name.
std::string ObjectKey(const nlohmann::json& object);

}  // namespace gfp::adapters::apiserver
