#include "adapters/kubelet/grpc_lifetime.h"

#include <absl/synchronization/mutex.h>
#include <grpc/grpc.h>

namespace gfp::adapters::kubelet {

void KeepGrpcInitialized() {
  // Deliberately never matched by grpc_shutdown() (see the header).
  static const bool initialized = [] {
    // Debian builds abseil without NDEBUG, which leaves absl::Mutex's deadlock detection on:
    // every lock and unlock of gRPC's mutexes then updates one process-wide lock graph, under a
    // global lock (GraphCycles was 2 to 3 % of serve's CPU per Allocate). Our own locks are
    // std::mutex, checked by ThreadSanitizer in CI.
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
    grpc_init();
    return true;
  }();
  (void)initialized;
}

}  // namespace gfp::adapters::kubelet
