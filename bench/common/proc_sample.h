// What /proc says about another process (serve): resident memory, CPU time, threads and open
// file descriptors, for the benchmarks' steady-state and soak figures.
#pragma once

#include <sys/types.h>

namespace gfp::bench {

struct ProcSample {
  double rss_mib = 0;       // VmRSS of /proc/<pid>/status
  double rss_anon_mib = 0;  // RssAnon of it: heap and stacks, without the code and files mapped
  double cpu_seconds = 0;   // utime + stime of /proc/<pid>/stat (10 ms ticks)
  int threads = 0;          // Threads of /proc/<pid>/status
  int open_fds = 0;         // entries of /proc/<pid>/fd
  bool ok = false;          // false when the process could not be read (it has ended)
};

ProcSample SampleProc(pid_t pid);

}  // namespace gfp::bench
