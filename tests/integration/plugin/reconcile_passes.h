// Checks that something did NOT happen wait for serve's loop to turn, not for a sleep a slow
// machine may not fill: each reconcile pass is a PodResources List call the fake kubelet counts.
#pragma once

#include <chrono>

#include "integration/plugin/plugin_process.h"
#include "sim/kubelet/fake_kubelet.h"

namespace gfp::testing {

// Waits until serve has finished `passes` reconcile passes that began after this call: the
// (passes + 1)-th List call since then has begun, and serve's loop makes one at a time. The
// other steps of a loop turn (registration, the kubelet check, node labels) ran in between, and
// the passes are --reconcile-interval apart, so this also waits (passes - 1) intervals.
inline bool WaitForReconcilePasses(kubelet::FakeKubelet& kubelet, int passes,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const int start = kubelet.pod_resources().list_calls();
  return WaitUntil([&] { return kubelet.pod_resources().list_calls() > start + passes; }, timeout,
                   std::chrono::milliseconds(5));
}

}  // namespace gfp::testing
