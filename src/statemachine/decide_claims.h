// Decisions about DRA claims (SPEC §11): prepare (through the same partition saga as a kubelet
// allocation), record the files, unprepare, and the published ResourceSlice. Internal to the
// state machine: decide.cc dispatches these commands here.
#pragma once

#include <string>
#include <vector>

#include "statemachine/commands.h"
#include "statemachine/decide_steps.h"

namespace gfp::sm {

void DecidePrepareClaim(Builder& b, const PrepareClaim& c);
void DecideRecordClaimFiles(Builder& b, const RecordClaimFiles& c);
void DecideUnprepareClaim(Builder& b, const UnprepareClaim& c);
void DecideClaimFilesRemoved(Builder& b, const RecordClaimFilesRemoved& c);
void DecideSlicePublished(Builder& b, const RecordResourceSlicePublished& c);

// Why kubelet may not allocate `devices` through the device plugin: one of them belongs to a
// live DRA claim. Empty text when none does.
Refusal ClaimHoldsRefusal(const State& s, const std::vector<std::string>& devices);

// The most devices one claim may name: a ResourceSlice holds at most 128.
inline constexpr std::size_t kMaxClaimDevices = 128;
// status.reservedFor holds at most 256 consumers.
inline constexpr std::size_t kMaxClaimConsumers = 256;

}  // namespace gfp::sm
