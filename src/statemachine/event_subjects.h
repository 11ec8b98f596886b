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
// devices an allocation requested, VFs): sorted, without duplicates. Allocation IDs are not
// tags (one per allocation would grow the index without bound).
std::vector<std::string> EventSubjects(const events::Event& event);

std::string PartitionSubject(std::uint32_t partition_id);
std::string DeviceSubject(std::string_view device_id);

}  // namespace gfp::sm
