// The subjects an event is about, as opaque tags for the journal's index (store::NewEvent's
// `subjects`): `journal history --partition N` and `--device ID` answer from them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "statemachine/events.pb.h"

namespace gfp::sm {

// "p:<id>" for every partition the event names as its subject (activation, deactivation, grant,
// drift, resync), "d:<id>" for every device it names (inventory, module mapping, health, the
// devices an allocation requested, VFs), "c:<uid>" for the DRA claim a claim event is about and
// "n:<namespace>/<name>" for the claim a ClaimPrepareRequested names: sorted, without duplicates.
// Allocation IDs are not tags (one per container allocation would grow the index fast); a claim
// is one per VM, and `journal history --claim` answers from its tags.
std::vector<std::string> EventSubjects(const events::Event& event);

// The allocation id an event names (its own, the one a transition is for, a drift's owner);
// empty for events about no allocation.
std::string EventAllocationId(const events::Event& event);

// The DRA claim uid a claim event is about; empty for other events.
std::string EventClaimUid(const events::Event& event);

std::string PartitionSubject(std::uint32_t partition_id);
std::string DeviceSubject(std::string_view device_id);
std::string ClaimSubject(std::string_view claim_uid);
std::string ClaimNameSubject(std::string_view claim_namespace, std::string_view claim_name);

}  // namespace gfp::sm
