#include "bench/common/thread_sched.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <cstring>

namespace gfp::bench {

ThreadCounters CurrentThreadCounters() {
  struct rusage usage {};
  if (::getrusage(RUSAGE_THREAD, &usage) != 0) return {};
  return {usage.ru_nvcsw, usage.ru_nivcsw, usage.ru_minflt + usage.ru_majflt};
}

RealtimeForScope::RealtimeForScope() {
  sched_param old{};
  if (int rc = pthread_getschedparam(pthread_self(), &old_policy_, &old); rc != 0) {
    why_ = std::string("pthread_getschedparam: ") + std::strerror(rc);
    return;
  }
  old_priority_ = old.sched_priority;
  sched_param rt{};
  rt.sched_priority = 1;
  if (int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt); rc != 0) {
    why_ = std::string("SCHED_FIFO not allowed: ") + std::strerror(rc);
    return;
  }
  raised_ = true;
}

RealtimeForScope::~RealtimeForScope() {
  if (!raised_) return;
  sched_param old{};
  old.sched_priority = old_priority_;
  pthread_setschedparam(pthread_self(), old_policy_, &old);
}

}  // namespace gfp::bench
