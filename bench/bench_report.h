// What every benchmark prints with: percentiles and a markdown table of metric / value / note.
// Benchmarks report figures and never fail on timing.
#pragma once

#include <errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace gfp::bench {

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

inline std::string Fmt(const char* fmt, double v) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

inline void Header() {
  std::printf("| %-58s | %20s | %-46s |\n", "metric", "value", "target / note");
  std::printf("|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(22, '-').c_str(),
              std::string(48, '-').c_str());
}

inline void Row(const std::string& metric, const std::string& value, const std::string& note) {
  std::printf("| %-58s | %20s | %-46s |\n", metric.c_str(), value.c_str(), note.c_str());
  std::fflush(stdout);
}

[[noreturn]] inline void Die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(2);
}

}  // namespace gfp::bench
