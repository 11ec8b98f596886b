#include "adapters/apiserver/watch_event.h"

namespace gfp::adapters::apiserver {

Result<bool> WatchLineFramer::Feed(std::string_view bytes,
                                   const std::function<bool(std::string_view)>& on_line) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, newline);
    if (partial_.size() + piece.size() > max_line_bytes_) {
      partial_.clear();
      return ResourceExhausted("a watch event is longer than the " +
                               std::to_string(max_line_bytes_) + "-byte limit");
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return true;
    }
    bytes.remove_prefix(newline + 1);
    std::string line = std::move(partial_);
    partial_.clear();
    line.append(piece);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!on_line(line)) return false;
  }
  return true;
}

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return DataLoss("a watch event (" + std::to_string(line.size()) + " bytes) is not JSON");
  }
  if (!parsed.is_object()) return DataLoss("a watch event is not a JSON object");
  const auto type = parsed.find("type");
  const auto object = parsed.find("object");
  if (type == parsed.end() || !type->is_string() || type->get<std::string>().empty()) {
    return DataLoss("a watch event has no \"type\" string");
  }
  if (object == parsed.end() || !object->is_object()) {
    return DataLoss("a watch event of type " + type->get<std::string>() +
                    " has no \"object\" object");
  }
  return WatchEvent{type->get<std::string>(), std::move(*object)};
}

int WatchErrorCode(const WatchEvent& event) {
  const auto code = event.object.find("code");
  if (code == event.object.end() || !code->is_number_integer()) return 0;
  return code->get<int>();
}

}  // namespace gfp::adapters::apiserver
