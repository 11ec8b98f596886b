// State <-> bytes for journal snapshots. Deterministic: equal states encode to equal bytes.
#pragma once

#include <string>

#include "common/status.h"
#include "statemachine/state.h"

namespace gfp::sm {

inline constexpr std::uint32_t kSnapshotFormatVersion = 1;

std::string EncodeSnapshot(const State& state);
Result<State> DecodeSnapshot(const std::string& bytes);

}  // namespace gfp::sm
