// Outside text (kubelet IDs, FM strings, messages that carry them) as a log line carries it.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "common/text_escape.h"

namespace gfp::plugin::core {

// Escaped (gfp::EscapeAndTruncate) when it holds a control character or is longer than
// `max_bytes`; otherwise unchanged, so that a message already escaped where it was made (a
// refusal) is not escaped twice.
inline std::string LogText(std::string_view text, std::size_t max_bytes) {
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 || byte == 0x7f;
  });
  if (!control && text.size() <= max_bytes) return std::string(text);
  return EscapeAndTruncate(text, max_bytes);
}

}  // namespace gfp::plugin::core
