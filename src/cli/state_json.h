// `journal state --format json`: the state walked from its snapshot message (SnapshotOf,
// statemachine/snapshot.proto), so every fact the state holds is printed and a field added to
// State and snapshot.proto appears without code here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "statemachine/state.h"

namespace gfp::cli {

// Keys are snapshot.proto's field names except where a small table keeps the names `journal
// state` has always printed (SPEC §2.2: `last_seq`, `active_partitions[]` with `partition_id`,
// `devices`, `allocation_id`, `pod`; docs/journal-format.md) and shows numbers as names and times
// as RFC 3339. Added views: a partition's GPUs, the pod of an allocation, the counts `devices` and
// `partitions_known`, `unhealthy_devices`.
nlohmann::json StateJson(const sm::State& state);

// Rows of that table that name no field of snapshot.proto (a renamed or removed field): a test
// keeps it empty.
std::vector<std::string> StateJsonRowsWithoutField();

}  // namespace gfp::cli
