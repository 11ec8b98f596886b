// `journal history --claim UID|NAMESPACE/NAME` (SPEC §2.2): which events are a DRA claim's.
#pragma once

#include <set>
#include <string>

#include "common/status.h"
#include "statemachine/events.pb.h"
#include "store/journal.h"

namespace gfp::cli {

// The claims a --claim value names (a uid, or every uid a namespace/name was prepared under)
// and the allocations that prepared them, found through the journal's index.
struct ClaimSelection {
  std::set<std::string> uids;
  std::set<std::string> allocation_ids;

  // The event is one of the claims' own events, or names one of their allocations (the
  // partition saga that prepared it).
  bool Holds(const events::Event& event) const;
};

Result<ClaimSelection> SelectClaim(const store::Journal& journal, const std::string& claim);

}  // namespace gfp::cli
