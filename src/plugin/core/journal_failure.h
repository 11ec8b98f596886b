// How a journal that cannot be written fails a kubelet call: it is the plugin's own failure, not
// the caller's. Full (SQLITE_FULL) stays RESOURCE_EXHAUSTED, so an operator knows to free space;
// anything else is INTERNAL. The store's finer codes (READONLY is FailedPrecondition, BUSY is
// Unavailable, CONSTRAINT is InvalidArgument) describe the journal, and would tell kubelet that
// its request was wrong or the node not ready. The message is kept as it is.
#pragma once

#include "common/status.h"

namespace gfp::plugin::core {

inline Status JournalFailure(const Status& status) {
  if (status.ok() || status.code() == ErrorCode::kResourceExhausted) return status;
  return Status(ErrorCode::kInternal, status.message());
}

}  // namespace gfp::plugin::core
