// What every event handler of apply() works with: the state, the event's seq and time, and the
// shared steps (record an anomaly, find a live allocation, end one). apply.cc and
// apply_claims.cc build their handlers on it. Internal to the state machine.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "statemachine/state.h"

namespace gfp::sm {

class ApplyScope {
 public:
  ApplyScope(State& state, std::uint64_t seq, Micros time) : s_(state), seq_(seq), time_(time) {}

  // Records an event that made no sense for the state (it then changes nothing else).
  void Anomaly(std::string description);

  // The live allocation `id`, or null and an anomaly naming `event_name`.
  Allocation* LiveAllocation(const std::string& id, const char* event_name);

  // Removes a finished allocation from memory and detaches it from any partition it owned.
  void Finish(const AllocationId& id);

  // Keeps the state's allocation counter ahead of every allocation id seen, whoever minted it.
  void NoteAllocationId(std::string_view id);

 protected:
  State& s_;
  std::uint64_t seq_;
  Micros time_;
};

}  // namespace gfp::sm
