#include "cli/journal_claim.h"

#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"

namespace gfp::cli {
namespace {

// Calls fn with each decoded event tagged `subject`.
Status ForEachTagged(const store::Journal& journal, const std::string& subject,
                     const std::function<void(const events::Event&)>& fn) {
  store::EventFilter filter;
  filter.subject = subject;
  return journal.ForEachMatching(filter, [&](const store::StoredEvent& stored) -> Status {
    auto decoded = sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload);
    if (!decoded.ok()) {
      return decoded.status().WithContext("journal seq " + std::to_string(stored.seq));
    }
    fn(*decoded);
    return Status::Ok();
  });
}

}  // namespace

bool ClaimSelection::Holds(const events::Event& event) const {
  const std::string uid = sm::EventClaimUid(event);
  if (!uid.empty()) return uids.count(uid) > 0;
  const std::string allocation = sm::EventAllocationId(event);
  return !allocation.empty() && allocation_ids.count(allocation) > 0;
}

Result<ClaimSelection> SelectClaim(const store::Journal& journal, const std::string& claim) {
  ClaimSelection selection;
  if (const auto slash = claim.find('/'); slash != std::string::npos) {
    GFP_RETURN_IF_ERROR(ForEachTagged(
        journal, sm::ClaimNameSubject(claim.substr(0, slash), claim.substr(slash + 1)),
        [&](const events::Event& e) {
          if (e.has_claim_prepare_requested()) {
            selection.uids.insert(e.claim_prepare_requested().claim().uid());
          }
        }));
  } else {
    selection.uids.insert(claim);
  }
  for (const std::string& uid : selection.uids) {
    GFP_RETURN_IF_ERROR(ForEachTagged(journal, sm::ClaimSubject(uid), [&](const events::Event& e) {
      if (std::string id = sm::EventAllocationId(e); !id.empty()) {
        selection.allocation_ids.insert(std::move(id));
      }
    }));
  }
  return selection;
}

}  // namespace gfp::cli
