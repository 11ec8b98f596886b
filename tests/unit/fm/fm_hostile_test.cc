// Replies that break the SDK's documented limits must give clear errors and no out-of-bounds
// reads (the ASan build checks the latter: the list structs are heap objects of exact size).
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using testing::FmSimTest;

class FmHostile : public FmSimTest {
 protected:
  void ExpectMalformed(const FmError& error, const std::string& detail) {
    EXPECT_EQ(error.name, "FM_ST_GENERIC_ERROR");
    EXPECT_EQ(error.category, ErrorCode::kDataLoss);
    EXPECT_FALSE(error.from_library);
    EXPECT_NE(error.message.find(detail), std::string::npos) << error.message;
  }
};

TEST_F(FmHostile, PartitionListReplies) {
  struct Case {
    fmsim::HostileReply reply;
    const char* detail;
  };
  auto client = NewClient();
  ASSERT_TRUE(client);
  for (const Case& c : {
           Case{fmsim::HostileReply::kTooManyPartitions,
                "numPartitions = 65 is above the maximum 64"},
           Case{fmsim::HostileReply::kTooManyGpus,
                "partition 0 numGpus = 17 is above the maximum 16"},
           Case{fmsim::HostileReply::kUnterminatedStrings,
                "partition 0 GPU 0 uuid is not NUL-terminated within its 80-byte buffer"},
           Case{fmsim::HostileReply::kDuplicatePartitionIds, "partition id 0 is listed twice"},
           Case{fmsim::HostileReply::kBadPhysicalId, "has physicalId 17 (expected 1..16)"},
       }) {
    ASSERT_TRUE(sim().SetHostileReply(c.reply).ok());
    auto partitions = client->GetSupportedPartitions();
    ASSERT_FALSE(partitions.ok()) << fmsim::HostileReplyName(c.reply);
    ExpectMalformed(partitions.error(), c.detail);
    EXPECT_NE(
        partitions.error().message.find("fmGetSupportedFabricPartitions returned FM_ST_SUCCESS"),
        std::string::npos);
  }
  ASSERT_TRUE(sim().SetHostileReply(fmsim::HostileReply::kNone).ok());
  EXPECT_TRUE(client->GetSupportedPartitions().ok());
}

TEST_F(FmHostile, UnsupportedListWithTooManyPartitions) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(sim().SetHostileReply(fmsim::HostileReply::kTooManyUnsupported).ok());
  auto unsupported = client->GetUnsupportedPartitions();
  ASSERT_FALSE(unsupported.ok());
  ExpectMalformed(unsupported.error(), "numPartitions = 65 is above the maximum 64");
}

TEST_F(FmHostile, NvlinkFailedDevicesReplies) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(sim().SetHostileReply(fmsim::HostileReply::kTooManyFailedDevices).ok());
  auto failed = client->GetNvlinkFailedDevices();
  ASSERT_FALSE(failed.ok());
  ExpectMalformed(failed.error(), "numGpus = 17 is above the maximum 16");

  ASSERT_TRUE(sim().SetHostileReply(fmsim::HostileReply::kUnterminatedStrings).ok());
  failed = client->GetNvlinkFailedDevices();
  ASSERT_FALSE(failed.ok());
  ExpectMalformed(failed.error(), "failed GPU 0 uuid is not NUL-terminated");
}

}  // namespace
}  // namespace gfp::adapters::fm
