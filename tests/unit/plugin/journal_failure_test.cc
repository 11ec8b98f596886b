// A journal that cannot be written fails a kubelet call as RESOURCE_EXHAUSTED when full and
// INTERNAL otherwise, whatever finer code the store gave it; the message is kept.
#include "plugin/core/journal_failure.h"

#include <gtest/gtest.h>

namespace gfp::plugin::core {
namespace {

TEST(JournalFailure, FullStaysResourceExhaustedEverythingElseIsInternal) {
  EXPECT_TRUE(JournalFailure(Status::Ok()).ok());
  EXPECT_EQ(JournalFailure(ResourceExhausted("full")).code(), ErrorCode::kResourceExhausted);
  for (const Status& store :
       {FailedPrecondition("read-only"), Unavailable("busy"), InvalidArgument("constraint"),
        DataLoss("corrupt"), Internal("I/O error")}) {
    const Status mapped = JournalFailure(store);
    EXPECT_EQ(mapped.code(), ErrorCode::kInternal) << store.message();
    EXPECT_EQ(mapped.message(), store.message());
  }
}

}  // namespace
}  // namespace gfp::plugin::core
