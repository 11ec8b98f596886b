// Fills two messages of "the same" type from two descriptor pools (the official kubelet files and
// our generated code) with identical content, walking the fields by reflection so that fields
// added later are covered without touching the test. Differences in the declarations themselves
// (missing field, other name, type, cardinality, packing, presence) are reported, not filled.
#pragma once

#include <google/protobuf/message.h>

#include <string>
#include <vector>

namespace gfp::kubelet::testing {

// Sets every field of `official` and `ours` (repeated and map fields get two elements, nested
// messages are filled recursively) and appends a description of each declaration mismatch to
// `mismatches`. `seed` makes values differ between siblings (distinct map keys).
void FillTwins(google::protobuf::Message* official, google::protobuf::Message* ours, int seed,
               std::vector<std::string>* mismatches);

// Deterministic encoding (map entries sorted by key), so equal content gives equal bytes.
std::string DeterministicBytes(const google::protobuf::Message& message);

}  // namespace gfp::kubelet::testing
