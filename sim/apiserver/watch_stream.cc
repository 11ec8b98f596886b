#include "sim/apiserver/watch_stream.h"

#include <charconv>
#include <chrono>
#include <string>
#include <vector>

#include "sim/apiserver/api_status.h"
#include "sim/apiserver/field_selector.h"

namespace gfp::apisim {
namespace {

using nlohmann::json;

std::string EventLine(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

// A bad number gets nullopt; "" and "0" mean "from now, with the current objects first".
std::optional<std::uint64_t> ParseVersion(const std::string& text) {
  if (text.empty()) return 0;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool SendHugeEvent(mg_connection* connection) {
  json object = {{"kind", "ResourceSlice"},
                 {"apiVersion", "resource.k8s.io/v1"},
                 {"metadata",
                  {{"name", "huge"},
                   {"resourceVersion", "1"},
                   {"annotations", {{"padding", std::string(kHugeEventBytes, 'x')}}}}}};
  return SendChunk(connection, EventLine("ADDED", object));
}

// A line that never ends: 64 KiB of name every 10 ms until the client leaves or the server stops.
void SendEndlessEvent(mg_connection* connection, const StopCheck& stop) {
  if (!SendChunk(connection, R"({"type":"ADDED","object":{"metadata":{"name":")")) return;
  const std::string filler(64 * 1024, 'a');
  while (SendChunk(connection, filler) && SleepUnless(std::chrono::milliseconds(10), stop)) {
  }
}

// Streams events after `cursor` until the deadline (true: end cleanly) or stop/the client leaves.
bool StreamEvents(mg_connection* connection, const ObjectStore& store,
                  const FieldSelector& selector, std::uint64_t cursor,
                  std::chrono::steady_clock::time_point deadline, const StopCheck& stop) {
  while (std::chrono::steady_clock::now() < deadline) {
    if (stop()) return false;
    std::vector<WatchEvent> events;
    const auto read = store.EventsAfter(cursor, std::chrono::milliseconds(50), events);
    if (read == ObjectStore::WatchRead::kExpired) {
      const json status =
          StatusObject(410, "too old resource version: " + std::to_string(cursor) + " (compacted)");
      return SendChunk(connection, EventLine("ERROR", status));
    }
    for (const WatchEvent& e : events) {
      cursor = e.resource_version;
      if (!selector.Matches(e.object)) continue;
      if (!SendChunk(connection, EventLine(e.type, e.object))) return false;
    }
  }
  return true;
}

}  // namespace

int ServeWatch(mg_connection* connection, const ObjectStore& store, const Route& route,
               const Fault* stream_fault, const StopCheck& stop) {
  const auto selector = FieldSelector::Parse(route.Query("fieldSelector"));
  const auto version = ParseVersion(route.Query("resourceVersion"));
  int seconds = kDefaultWatchSeconds;
  const std::string timeout = route.Query("timeoutSeconds");
  if (!timeout.empty() && (!ParseVersion(timeout) || timeout.size() > 6)) {
    SendJson(connection, 400, StatusObject(400, "invalid timeoutSeconds: " + timeout));
    return 400;
  }
  if (!timeout.empty()) seconds = static_cast<int>(*ParseVersion(timeout));
  if (!selector.ok() || !version) {
    const std::string why = !selector.ok()
                                ? selector.status().message()
                                : "invalid resourceVersion: " + route.Query("resourceVersion");
    SendJson(connection, 400, StatusObject(400, why));
    return 400;
  }
  SendStreamHeaders(connection);
  if (stream_fault && stream_fault->kind == FaultKind::kEndlessEvent) {
    SendEndlessEvent(connection, stop);
    return 200;
  }
  if (stream_fault && stream_fault->kind == FaultKind::kHugeEvent && !SendHugeEvent(connection)) {
    return 200;
  }
  std::uint64_t cursor = *version;
  if (cursor == 0) {
    std::vector<WatchEvent> initial;
    cursor = store.Snapshot(initial);
    for (const WatchEvent& e : initial) {
      if (selector->Matches(e.object) && !SendChunk(connection, EventLine(e.type, e.object))) {
        return 200;
      }
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  if (StreamEvents(connection, store, *selector, cursor, deadline, stop)) EndChunks(connection);
  return 200;
}

}  // namespace gfp::apisim
