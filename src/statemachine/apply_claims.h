// apply() for the DRA claim events and ResourceSlicePublished (SPEC §11). Internal to the state
// machine: apply.cc dispatches these event types here.
#pragma once

#include "statemachine/apply_scope.h"
#include "statemachine/events.pb.h"

namespace gfp::sm {

// `event` holds one of ClaimPrepareRequested, ClaimPrepared, ClaimPrepareFailed,
// ClaimUnprepareRequested, ClaimUnprepared, ResourceSlicePublished.
void ApplyClaimEvent(ApplyScope& scope, const events::Event& event);

}  // namespace gfp::sm
