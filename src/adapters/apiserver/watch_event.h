// The events of a watch stream (SPEC §11): one JSON object per line,
// {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}, framed here under a cap so a
// huge or endless line is refused instead of buffered.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::apiserver {

struct WatchEvent {
  std::string type;  // "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
  nlohmann::json object;
};

// Splits a byte stream into lines of at most max_line_bytes (the newline not counted).
class WatchLineFramer {
 public:
  explicit WatchLineFramer(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Adds bytes and calls on_line for each complete non-empty line. Returns false once on_line
  // returned false (the rest is dropped), an error when a line grows past the cap.
  Result<bool> Feed(std::string_view bytes, const std::function<bool(std::string_view)>& on_line);

  // Bytes of an unfinished line (a stream that ends here ended mid-event).
  std::size_t pending_bytes() const { return partial_.size(); }

 private:
  std::size_t max_line_bytes_;
  std::string partial_;
};

// One line as an event; garbage, a missing type or a non-object "object" is an error.
Result<WatchEvent> ParseWatchEvent(std::string_view line);

// The HTTP-like code of an ERROR event's Status object (410 when the resourceVersion is too
// old), 0 when it has none.
int WatchErrorCode(const WatchEvent& event);

}  // namespace gfp::adapters::apiserver
