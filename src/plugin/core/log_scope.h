// Filling the thread's log context (common/log_context.h) from the plugin's state, so that the
// lines PluginCore logs about an allocation carry its id, partition and pod (SPEC §2.1
// --log-format). Only reads; a field that is not known is left as the enclosing scope has it.
#pragma once

#include <vector>

#include "common/log_context.h"
#include "engine/engine.h"
#include "statemachine/events.pb.h"
#include "statemachine/state.h"

namespace gfp::plugin::core {

// The allocation's id, and its partition and pod when the state knows them.
void AddAllocation(ScopedLogContext& scope, const sm::State& state, const sm::AllocationId& id);

// The partition, and the allocation whose work it is: the one its pending intent is for; else
// the enclosing scope's; else its owner.
void AddPartition(ScopedLogContext& scope, const sm::State& state, sm::PartitionId id);

// The newest live allocation of exactly `devices` (PreStart names devices, not allocations).
void AddAllocationOfDevices(ScopedLogContext& scope, const sm::State& state,
                            const std::vector<sm::Bdf>& devices);

// What one journaled event is about: its allocation_id, partition_id, pod and FM result.
void AddEvent(ScopedLogContext& scope, const sm::State& state, const events::Event& event);

// The same, reading the engine's current state.
void AddAllocation(ScopedLogContext& scope, const engine::Engine& engine,
                   const sm::AllocationId& id);
void AddPartition(ScopedLogContext& scope, const engine::Engine& engine, sm::PartitionId id);
void AddAllocationOfDevices(ScopedLogContext& scope, const engine::Engine& engine,
                            const std::vector<sm::Bdf>& devices);

}  // namespace gfp::plugin::core
