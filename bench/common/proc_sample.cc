#include "bench/common/proc_sample.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace gfp::bench {
namespace {

// VmRSS, RssAnon and Threads of /proc/<pid>/status; false when it cannot be read.
bool ReadStatus(const std::string& proc, ProcSample& s) {
  std::ifstream status(proc + "/status");
  if (!status) return false;
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "VmRSS:") {
      double kib = 0;
      in >> kib;
      s.rss_mib = kib / 1024.0;
    } else if (key == "RssAnon:") {
      double kib = 0;
      in >> kib;
      s.rss_anon_mib = kib / 1024.0;
    } else if (key == "Threads:") {
      in >> s.threads;
    }
  }
  return true;
}

// utime + stime of /proc/<pid>/stat, in seconds; false when it cannot be read.
bool ReadCpuSeconds(const std::string& proc, ProcSample& s) {
  std::ifstream stat(proc + "/stat");
  const std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = all.rfind(')');  // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 > all.size()) return false;
  std::istringstream fields(all.substr(close + 2));
  std::vector<std::string> f;
  std::string tok;
  while (fields >> tok) f.push_back(tok);
  if (f.size() < 13) return false;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  return true;
}

int CountOpenFds(const std::string& proc) {
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it(proc + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++count;
  }
  return ec ? -1 : count;
}

}  // namespace

ProcSample SampleProc(pid_t pid) {
  ProcSample s;
  const std::string proc = "/proc/" + std::to_string(pid);
  if (!ReadStatus(proc, s) || !ReadCpuSeconds(proc, s)) return s;
  s.open_fds = CountOpenFds(proc);
  s.ok = s.open_fds >= 0;
  return s;
}

}  // namespace gfp::bench
