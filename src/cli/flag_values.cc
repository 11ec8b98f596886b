#include "cli/flag_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "common/text_escape.h"

namespace gfp::cli {
namespace {

// "--name=value" as typed, safe to echo.
std::string Echo(const std::string& name, const std::string& value) {
  return "--" + name + "=" + EscapeAndTruncate(value, 200);
}

// "24h", "720h (30 days)", "90s", "250ms": the largest unit that divides `d`.
std::string DescribeMaximum(std::chrono::milliseconds d) {
  const std::int64_t ms = d.count();
  constexpr std::int64_t kHour = 3'600'000, kDay = 24 * kHour;
  if (ms % kHour == 0) {
    std::string text = std::to_string(ms / kHour) + "h";
    if (ms > kDay && ms % kDay == 0) text += " (" + std::to_string(ms / kDay) + " days)";
    return text;
  }
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

// Milliseconds per unit; 0 for an unknown unit.
std::int64_t UnitMilliseconds(const std::string& unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60'000;
  if (unit == "h") return 3'600'000;
  return 0;
}

Status EmptyValue(const std::string& flag) {
  return InvalidArgument(EscapeAndTruncate(flag, 100) +
                         ": the value is empty; give a value, or leave the flag out to use its "
                         "default");
}

}  // namespace

Result<bool> ParseBoolFlag(const std::string& name, const std::string& value) {
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v.empty() || v == "1" || v == "t" || v == "true") return true;
  if (v == "0" || v == "f" || v == "false") return false;
  return InvalidArgument(Echo(name, value) + ": expected 1/0, true/false or t/f");
}

Result<std::chrono::milliseconds> ParseDurationFlag(const std::string& name,
                                                    const std::string& value,
                                                    std::chrono::milliseconds maximum) {
  std::int64_t amount = 0;
  const char* begin = value.data();
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(begin, end, amount);
  const std::string unit(ptr, end);
  const bool too_many_digits = ec == std::errc::result_out_of_range;
  if ((ec != std::errc() && !too_many_digits) || ptr == begin || amount < 0 ||
      value.front() == '-') {
    return InvalidArgument(Echo(name, value) + ": expected a duration like 5s, 250ms, 2m");
  }
  const std::int64_t unit_ms = UnitMilliseconds(unit);
  if (unit_ms == 0) {
    return InvalidArgument(Echo(name, value) + ": unknown unit \"" + EscapeAndTruncate(unit, 50) +
                           "\" (use ms, s, m or h)");
  }
  // Compared before multiplying: amount * unit_ms may not fit in 64 bits.
  if (too_many_digits || amount > maximum.count() / unit_ms || amount * unit_ms > maximum.count()) {
    return InvalidArgument(Echo(name, value) + " is above the maximum " + DescribeMaximum(maximum));
  }
  return std::chrono::milliseconds(amount * unit_ms);
}

Status CheckNoEmptyValues(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    const auto equals = arg.find('=');
    if (equals != std::string::npos) {
      if (equals + 1 == arg.size()) return EmptyValue(arg.substr(0, equals));
      continue;
    }
    if (i + 1 < args.size() && args[i + 1].empty()) return EmptyValue(arg);
  }
  return Status::Ok();
}

Status CheckEnvironmentValueNotEmpty(const std::string& name, const std::string& env) {
  const char* value = std::getenv(env.c_str());
  if (value == nullptr || *value != '\0') return Status::Ok();
  return InvalidArgument("--" + name + ": environment variable " + env +
                         " is set but empty; give a value, or unset it to use the default");
}

}  // namespace gfp::cli
