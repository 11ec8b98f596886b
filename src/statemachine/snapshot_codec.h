// State <-> bytes for journal snapshots. Deterministic: equal states encode to equal bytes.
#pragma once

#include <string>

#include "common/status.h"
#include "statemachine/state.h"

namespace gfp::sm {

// Bump whenever State (and so snapshot.proto) changes: older snapshots are then ignored and the
// journal replayed from seq 1 instead of restoring a state that lacks the new fields.
inline constexpr std::uint32_t kSnapshotFormatVersion = 3;

std::string EncodeSnapshot(const State& state);
Result<State> DecodeSnapshot(const std::string& bytes);

}  // namespace gfp::sm
