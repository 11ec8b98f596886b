#include "cli/flag_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gfp::cli {

Result<bool> ParseBoolFlag(const std::string& name, const std::string& value) {
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v.empty() || v == "1" || v == "t" || v == "true") return true;
  if (v == "0" || v == "f" || v == "false") return false;
  return InvalidArgument("--" + name + "=" + value + ": expected 1/0, true/false or t/f");
}

Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& name,
                                                    const std::string& value) {
  std::int64_t amount = 0;
  const char* begin = value.data();
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(begin, end, amount);
  const std::string unit(ptr, end);
  if (ec != std::errc() || ptr == begin || amount < 0) {
    return InvalidArgument("--" + name + "=" + value + ": expected a duration like 5s, 250ms, 2m");
  }
  if (unit == "ms") return std::chrono::milliseconds(amount);
  if (unit == "s") return std::chrono::milliseconds(amount * 1000);
  if (unit == "m") return std::chrono::milliseconds(amount * 60'000);
  if (unit == "h") return std::chrono::milliseconds(amount * 3'600'000);
  return InvalidArgument("--" + name + "=" + value + ": unknown unit \"" + unit +
                         "\" (use ms, s, m or h)");
}

}  // namespace gfp::cli
