#include "adapters/kubelet/grpc_lifetime.h"

#include <grpc/grpc.h>

namespace gfp::adapters::kubelet {

void KeepGrpcInitialized() {
  // Deliberately never matched by grpc_shutdown() (see the header).
  static const bool initialized = [] {
    grpc_init();
    return true;
  }();
  (void)initialized;
}

}  // namespace gfp::adapters::kubelet
