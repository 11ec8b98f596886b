// DRA claims (SPEC §11) read from the state: which allocation prepares a claim, and where a
// claim stands. Pure functions of the state.
#pragma once

#include <string>

#include "statemachine/state.h"

namespace gfp::sm {

// The live allocation of the DRA claim with this uid, if any.
const Allocation* ClaimAllocation(const State& state, const std::string& claim_uid);

// Where a DRA claim stands, from the state alone: what its caller does next.
enum class ClaimProgress {
  kUnknown,       // neither prepared nor being unprepared: Unprepare answers at once
  kPreparing,     // its partition saga is under way (an FM call, or a retry of Prepare, is next)
  kWriteFiles,    // its partition is ready: write the CDI and metadata files, then RecordClaimFiles
  kPrepared,      // prepared, its partition active (or no Fabric Manager)
  kDeactivating,  // being unprepared, its partition still active without an owner
  kRemoveFiles,   // being unprepared, its partition gone or taken over: remove the files
};
const char* ClaimProgressName(ClaimProgress progress);
ClaimProgress ClaimProgressOf(const State& state, const std::string& claim_uid);

// "namespace/name (uid U)", for messages.
std::string ClaimText(const Claim& claim);

}  // namespace gfp::sm
