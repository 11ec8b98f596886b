#include "adapters/apiserver/list_watch.h"

#include <spdlog/spdlog.h>

#include "adapters/apiserver/server_url.h"

namespace gfp::adapters::apiserver {
namespace {

const nlohmann::json* Metadata(const nlohmann::json& object) {
  const auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

}  // namespace

std::string ObjectKey(const nlohmann::json& object) {
  const nlohmann::json* metadata = Metadata(object);
  if (metadata == nullptr) return {};
  const std::string name = metadata->value("name", "");
  const std::string ns = metadata->value("namespace", "");
  return ns.empty() || name.empty() ? name : ns + "/" + name;
}

ListWatcher::ListWatcher(ApiClient& client, ListWatchOptions options, OnChange on_change)
    : client_(client), options_(std::move(options)), on_change_(std::move(on_change)) {}

ListWatcher::~ListWatcher() { Stop(); }

void ListWatcher::Start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void ListWatcher::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

std::string ListWatcher::resource_version() const {
  std::lock_guard lock(rv_mu_);
  return resource_version_;
}

void ListWatcher::SetResourceVersion(const nlohmann::json& metadata) {
  const auto rv = metadata.find("resourceVersion");
  if (rv == metadata.end() || !rv->is_string()) return;
  std::lock_guard lock(rv_mu_);
  resource_version_ = rv->get<std::string>();
}

std::string ListWatcher::Query(bool watch) const {
  std::string query;
  auto add = [&query](const std::string& key, const std::string& value) {
    query += (query.empty() ? "?" : "&") + key + "=" + EscapeQueryValue(value);
  };
  if (watch) {
    add("watch", "true");
    add("allowWatchBookmarks", "true");
    add("resourceVersion", resource_version());
  }
  if (!options_.field_selector.empty()) add("fieldSelector", options_.field_selector);
  if (!options_.label_selector.empty()) add("labelSelector", options_.label_selector);
  return query;
}

void ListWatcher::Run() {
  int failures = 0;
  bool relist = true;
  std::string last_failure;
  while (!stop_.stopped() && !client_.cancelled()) {
    Status status = relist ? List() : Status::Ok();
    if (status.ok()) {
      relist = false;
      status = WatchOnce(&relist);
    }
    if (stop_.stopped() || client_.cancelled()) break;
    if (status.ok()) {  // the stream ended or the version is gone: resume or relist now
      failures = 0;
      last_failure.clear();
      continue;
    }
    // Once per change of reason, like 401/403: an outage must not flood the log.
    if (status.message() != last_failure) {
      spdlog::warn("{} watcher: {}; retrying with backoff", options_.resource, status.message());
      last_failure = status.message();
    } else {
      spdlog::debug("{} watcher: {}; retrying with backoff", options_.resource, status.message());
    }
    if (!client_.Backoff(++failures, &stop_)) break;
  }
}

Status ListWatcher::List() {
  ++lists_;
  GFP_ASSIGN_OR_RETURN(ApiAnswer answer, client_.Call({Verb::kList, options_.resource,
                                                       options_.path + Query(false), "", ""}));
  if (answer.code != 200) {
    return Unavailable("list " + options_.resource + " answered HTTP " +
                       std::to_string(answer.code));
  }
  GFP_ASSIGN_OR_RETURN(nlohmann::json list, answer.Json());
  const nlohmann::json* metadata = list.is_object() ? Metadata(list) : nullptr;
  const auto items = list.is_object() ? list.find("items") : list.end();
  if (metadata == nullptr || items == list.end() || !(items->is_array() || items->is_null())) {
    return DataLoss("list " + options_.resource + ": the answer has no metadata or items");
  }
  ObjectsByName objects;
  if (items->is_array()) {
    for (const auto& item : *items) {
      if (std::string key = ObjectKey(item); !key.empty()) objects[key] = item;
    }
  }
  cache_ = std::move(objects);
  SetResourceVersion(*metadata);
  on_change_(cache_);
  return Status::Ok();
}

Status ListWatcher::WatchOnce(bool* relist) {
  ++watches_;
  Status error;
  Status watched = client_.Watch(
      {Verb::kWatch, options_.resource, options_.path + Query(true), "", ""},
      [&](const WatchEvent& event) { return Apply(event, relist, &error); }, &stop_);
  if (!error.ok()) return error;
  if (*relist) return Status::Ok();  // relisted at once, no backoff: the list is the remedy
  return watched;
}

bool ListWatcher::Apply(const WatchEvent& event, bool* relist, Status* error) {
  const nlohmann::json* metadata = Metadata(event.object);
  if (event.type == "ERROR") {
    const int code = WatchErrorCode(event);
    *relist = true;
    if (code != 410) {
      *error = Unavailable("watch " + options_.resource + ": ERROR event, code " +
                           std::to_string(code) + ": " + event.object.value("message", ""));
    }
    return false;
  }
  if (metadata != nullptr) SetResourceVersion(*metadata);
  if (event.type == "BOOKMARK") return true;
  const std::string key = ObjectKey(event.object);
  if (key.empty()) {
    spdlog::warn("watch {}: a {} event without metadata.name, ignored", options_.resource,
                 event.type);
    return true;
  }
  if (event.type == "ADDED" || event.type == "MODIFIED") {
    cache_[key] = event.object;
  } else if (event.type == "DELETED") {
    cache_.erase(key);
  } else {
    spdlog::warn("watch {}: unknown event type {}, ignored", options_.resource, event.type);
    return true;
  }
  on_change_(cache_);
  return true;
}

}  // namespace gfp::adapters::apiserver
