#include "sim/fm/fm_state_store.h"

namespace gfp::fmsim {

Status FileStateStore::Update(const std::function<Status(SimState&)>& change) {
  GFP_ASSIGN_OR_RETURN(LockedState locked, LockedState::Acquire(path_));
  GFP_RETURN_IF_ERROR(change(locked.state()));
  return locked.Commit();
}

Result<SimState> FileStateStore::Read() const {
  GFP_ASSIGN_OR_RETURN(LockedState locked, LockedState::Acquire(path_));
  return locked.state();
}

Result<std::vector<CallRecord>> FileStateStore::CallLog() const {
  GFP_ASSIGN_OR_RETURN(LockedState locked, LockedState::Acquire(path_));
  return locked.ReadCallLog();
}

Status FileStateStore::ClearCallLog() {
  GFP_ASSIGN_OR_RETURN(LockedState locked, LockedState::Acquire(path_));
  GFP_RETURN_IF_ERROR(locked.ClearCallLog());
  return locked.Commit();
}

Status MemoryStateStore::Update(const std::function<Status(SimState&)>& change) {
  SimState changed = state_;  // a refused change leaves nothing behind, as with the file
  GFP_RETURN_IF_ERROR(change(changed));
  state_ = std::move(changed);
  return Status::Ok();
}

Status MemoryStateStore::ClearCallLog() {
  calls_.clear();
  return Status::Ok();
}

void MemoryStateStore::AppendCall(CallRecord record) {
  if (calls_.size() >= kCallLogLimit) calls_.erase(calls_.begin());
  calls_.push_back(std::move(record));
}

}  // namespace gfp::fmsim
