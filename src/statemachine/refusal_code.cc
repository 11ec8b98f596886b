// RefusalErrorCode: the one place a state machine refusal becomes an error code.
#include "fm_codes/fm_codes.h"
#include "statemachine/decide.h"

namespace gfp::sm {

ErrorCode RefusalErrorCode(RefusalKind kind, int fm_return) {
  switch (kind) {
    case RefusalKind::kNone:
      return ErrorCode::kOk;
    case RefusalKind::kInvalidRequest:
      return ErrorCode::kInvalidArgument;
    case RefusalKind::kNotServable:
      return ErrorCode::kFailedPrecondition;
    case RefusalKind::kFabricManagerUnusable:
    case RefusalKind::kInterrupted:
      return ErrorCode::kUnavailable;
    case RefusalKind::kFabricManagerRefused: {
      // A refusal always fails the call, even if FM's code says success.
      const ErrorCode category = fm_codes::Category(fm_return);
      return category == ErrorCode::kOk ? ErrorCode::kInternal : category;
    }
  }
  return ErrorCode::kInternal;
}

}  // namespace gfp::sm
