#include "bench/common/serve_log.h"

#include <cmath>
#include <cstdlib>
#include <fstream>

namespace gfp::bench {
namespace {

constexpr const char* kRecovered = "recovered in";

}  // namespace

std::string RecoveryLine(const std::filesystem::path& log, std::uintmax_t from) {
  std::ifstream in(log);
  in.seekg(static_cast<std::streamoff>(from));
  std::string line;
  std::string found = "(no recovery line in the log)";
  while (std::getline(in, line)) {
    const auto at = line.find(kRecovered);
    if (at != std::string::npos) found = line.substr(at);
  }
  return found;
}

double RecoveryMillis(const std::string& recovery_line) {
  if (recovery_line.rfind(kRecovered, 0) != 0) return std::nan("");
  const char* number = recovery_line.c_str() + std::string(kRecovered).size();
  char* end = nullptr;
  const double ms = std::strtod(number, &end);
  return end == number ? std::nan("") : ms;
}

}  // namespace gfp::bench
