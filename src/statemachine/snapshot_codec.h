// State <-> bytes for journal snapshots. Deterministic: equal states encode to equal bytes.
#pragma once

#include <string>

#include "common/status.h"
#include "statemachine/snapshot.pb.h"
#include "statemachine/state.h"

namespace gfp::sm {

// Bump whenever State (and so snapshot.proto) changes: older snapshots are then ignored and the
// journal replayed from seq 1 instead of restoring a state that lacks the new fields.
inline constexpr std::uint32_t kSnapshotFormatVersion = 4;

// The state as snapshot.proto's message: what EncodeSnapshot serializes, and the one
// field-by-field view of a State that StateDiff and `journal state --format json` walk, so a
// field added to State and snapshot.proto shows in both without further code.
snapshot::State SnapshotOf(const State& state);
std::string EncodeSnapshot(const State& state);
Result<State> DecodeSnapshot(const std::string& bytes);

}  // namespace gfp::sm
