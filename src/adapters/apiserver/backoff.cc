#include "adapters/apiserver/backoff.h"

#include <algorithm>

namespace gfp::adapters::apiserver {

std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int failures,
                                       double unit_random) {
  const long long cap = std::max<long long>(0, policy.cap.count());
  long long delay = std::max<long long>(0, policy.base.count());
  // Doubling stops at the cap, so no shift overflows however many failures there were.
  for (int i = 1; i < failures && delay < cap; ++i) delay *= 2;
  delay = std::min(delay, cap);
  const double jitter = 0.5 + 0.5 * std::clamp(unit_random, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(static_cast<double>(delay) * jitter));
}

}  // namespace gfp::adapters::apiserver
