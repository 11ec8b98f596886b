// Small string helpers shared by messages, logs and the journal's summaries.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

namespace gfp {

// "a,b,c" from strings or numbers.
template <typename Range>
std::string Join(const Range& items, std::string_view separator = ",") {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    first = false;
    if constexpr (std::is_arithmetic_v<std::decay_t<decltype(item)>>) {
      out += std::to_string(item);
    } else {
      out += item;
    }
  }
  return out;
}

}  // namespace gfp
