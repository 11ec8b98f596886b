#include "bench/common/process_clock.h"

#include <time.h>

#include <string>

#include "bench/bench_report.h"

namespace gfp::bench {
namespace {

double Micros(const timespec& t) {
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace

double CpuMicrosOf(pid_t pid) {
  clockid_t clock{};
  timespec t{};
  if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &t) != 0) {
    Die("cannot read the CPU time of process " + std::to_string(pid));
  }
  return Micros(t);
}

double ThreadCpuMicros() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return Micros(t);
}

}  // namespace gfp::bench
