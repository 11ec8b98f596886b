// `gpu-fabric-plugin demo --mode=dra` (SPEC §2.3, §11): the simulated HGX H100 node's day with
// serve --mode=dra against a fake API server over HTTPS, the fake kubelet's DRA side and a
// stand-in scheduler (sim/world/claim_scheduler.h) that allocates fm-<N>gpu claims from the
// published slice; it ends with the journal's history of one claim and `journal verify`.
#pragma once

#include "sim/demo/demo_command.h"

namespace gfp::simdemo {

// Plays the DRA day; 0 when every step behaved.
int RunDraDay(const DemoFlags& flags);

}  // namespace gfp::simdemo
