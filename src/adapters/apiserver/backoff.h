// How long to wait before the next attempt after a failure: capped exponential, jittered so that
// the plugins of many nodes do not retry against the API server in step (SPEC §11).
#pragma once

#include <chrono>

namespace gfp::adapters::apiserver {

struct BackoffPolicy {
  std::chrono::milliseconds base{200};
  std::chrono::milliseconds cap{5000};
};

// The wait after failure number `failures` (1 for the first): base * 2^(failures-1), at most
// cap, scaled by a jitter factor in [0.5, 1] drawn from `unit_random` (a number in [0, 1)).
std::chrono::milliseconds BackoffDelay(const BackoffPolicy& policy, int failures,
                                       double unit_random);

}  // namespace gfp::adapters::apiserver
