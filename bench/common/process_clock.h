// CPU-time clocks the benchmarks read: of another process (serve), and of the calling thread.
#pragma once

#include <sys/types.h>

namespace gfp::bench {

// CPU time (user + system, every thread, live or exited) of process `pid`, in us: what
// /proc/<pid>/stat reports as utime + stime, read through the process's CPU-time clock in
// nanoseconds instead of clock ticks (10 ms), so that one call can be measured. Dies when the
// process cannot be read.
double CpuMicrosOf(pid_t pid);

// CPU time of the calling thread, in us.
double ThreadCpuMicros();

}  // namespace gfp::bench
