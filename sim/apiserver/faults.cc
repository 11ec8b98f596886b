#include "sim/apiserver/faults.h"

namespace gfp::apisim {
namespace {

bool Matches(const Fault& fault, const std::string& verb, const std::string& resource) {
  if (fault.count == 0) return false;
  if (fault.verb != "*" && fault.verb != verb) return false;
  if (fault.resource != "*" && fault.resource != resource) return false;
  const bool stream_only =
      fault.kind == FaultKind::kHugeEvent || fault.kind == FaultKind::kEndlessEvent;
  return !stream_only || verb == "watch";
}

}  // namespace

void FaultTable::Add(Fault fault) {
  std::lock_guard lock(mutex_);
  faults_.push_back(std::move(fault));
}

void FaultTable::Clear() {
  std::lock_guard lock(mutex_);
  faults_.clear();
}

bool FaultTable::Take(const std::string& verb, const std::string& resource, Fault& out) {
  std::lock_guard lock(mutex_);
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!Matches(*it, verb, resource)) continue;
    out = *it;
    if (it->count > 0 && --it->count == 0) faults_.erase(it);
    return true;
  }
  return false;
}

}  // namespace gfp::apisim
