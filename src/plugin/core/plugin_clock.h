// The wall clock the plugin stamps commands with; tests and the simulation pass their own.
#pragma once

#include <functional>

#include "statemachine/state.h"

namespace gfp::plugin::core {

using Clock = std::function<sm::Micros()>;
sm::Micros SystemClock();

}  // namespace gfp::plugin::core
