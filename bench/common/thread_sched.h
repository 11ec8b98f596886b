// How the kernel treated the calling thread: its context switches and page faults, and a scope
// in which it runs at real-time priority. The in-process GetPreferredAllocation rows use them to
// tell a call that waited (a lock, the disk: a voluntary switch) from one the scheduler
// preempted or one that faulted a page in.
#pragma once

#include <string>

namespace gfp::bench {

// The calling thread's context switches and page faults so far (getrusage RUSAGE_THREAD).
struct ThreadCounters {
  long voluntary = 0;    // it blocked: a futex, I/O, a sleep
  long involuntary = 0;  // the scheduler took the CPU away
  long faults = 0;       // page faults, minor and major
};
ThreadCounters CurrentThreadCounters();

// Runs the calling thread SCHED_FIFO (priority 1) until the scope ends, then puts its old policy
// back; where that is not allowed (no CAP_SYS_NICE), the thread stays as it was and why() says
// so. Threads of the normal policy then never preempt it; interrupts still do.
class RealtimeForScope {
 public:
  RealtimeForScope();
  ~RealtimeForScope();
  RealtimeForScope(const RealtimeForScope&) = delete;
  RealtimeForScope& operator=(const RealtimeForScope&) = delete;

  bool raised() const { return raised_; }
  const std::string& why() const { return why_; }  // why not raised; empty when raised

 private:
  bool raised_ = false;
  int old_policy_ = 0;
  int old_priority_ = 0;
  std::string why_;
};

}  // namespace gfp::bench
