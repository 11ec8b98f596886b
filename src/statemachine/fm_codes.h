// The few Fabric Manager return codes the state machine reasons about (fabric-manager.md §2.1).
// The full table with names lives in the FM adapter.
#pragma once

namespace gfp::sm {

inline constexpr int kFmSuccess = 0;
inline constexpr int kFmUninitialized = -4;  // deactivate: the partition is not active
inline constexpr int kFmInUse = -7;          // activate: active already, or its GPUs are in use

}  // namespace gfp::sm
