// The gRPC status code kubelet gets when the real binary refuses a call (issue 9 item 4): the
// caller's mistake is INVALID_ARGUMENT, a state that does not allow it FAILED_PRECONDITION,
// Fabric Manager not usable UNAVAILABLE, an FM refusal its code's category, a journal that
// cannot be written INTERNAL (RESOURCE_EXHAUSTED when full). The messages stay as they were.
#include <sqlite3.h>
#include <sys/mount.h>

#include <fstream>

#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

class GrpcCodesTest : public ServeFixture {
 protected:
  template <typename Outcome>
  void ExpectCode(const Outcome& outcome, grpc::StatusCode code, const std::string& message,
                  const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_EQ(outcome.status.error_code(), code) << Describe(outcome.status);
    EXPECT_NE(outcome.status.error_message().find(message), std::string::npos)
        << "expected a message containing \"" << message << "\", got " << Describe(outcome.status);
    EXPECT_TRUE(serve_->Running()) << what << " crashed serve";
  }
};

TEST_F(GrpcCodesTest, UnknownDeviceIdIsInvalidArgument) {
  Prepare({});
  StartServe();
  ExpectCode(Allocate({{PartitionBdfs(3)[0], "0000:ee:00.0"}}), grpc::StatusCode::INVALID_ARGUMENT,
             "unknown device 0000:ee:00.0", "unknown id");
  ExpectCode(Allocate({{"../x"}}), grpc::StatusCode::INVALID_ARGUMENT,
             "contains a path or control character", "id with a path");
  EXPECT_TRUE(ActivePartitions().empty());
}

TEST_F(GrpcCodesTest, GpusThatFormNoPartitionAreFailedPrecondition) {
  Prepare({});
  StartServe();
  const auto gpus = node_.GpuBdfs();
  ExpectCode(Allocate({{gpus[0], gpus[1], gpus[2]}}), grpc::StatusCode::FAILED_PRECONDITION,
             "no partition has 3 GPUs", "three GPUs");
  // Two GPUs of two different pairs.
  ExpectCode(Allocate({{PartitionBdfs(3)[0], PartitionBdfs(4)[0]}}),
             grpc::StatusCode::FAILED_PRECONDITION, "do not form one Fabric Manager partition",
             "GPUs of two partitions");
  EXPECT_TRUE(ActivePartitions().empty());
}

TEST_F(GrpcCodesTest, FabricManagerDownIsUnavailable) {
  Prepare({});
  StartServe();
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  ASSERT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Unhealthy"); }, 10s));
  ASSERT_TRUE(WaitForEvent(
      "FabricManagerDisconnected", [](const nlohmann::json&) { return true; }, 10s));
  ExpectCode(Allocate({PartitionBdfs(1)}), grpc::StatusCode::UNAVAILABLE,
             "Fabric Manager is not connected", "Allocate");
  ExpectCode(Preferred(node_.GpuBdfs(), {}, 2), grpc::StatusCode::UNAVAILABLE,
             "Fabric Manager is not usable", "GetPreferredAllocation");
  ExpectCode(PreStart(PartitionBdfs(1)), grpc::StatusCode::UNAVAILABLE,
             "Fabric Manager is not usable", "PreStartContainer");
  ASSERT_TRUE(fm_->SetUnreachable(false).ok());
  EXPECT_TRUE(WaitForDevices([](const auto& d) { return AllHealth(d, "Healthy"); }, 10s));
}

TEST_F(GrpcCodesTest, FabricManagerRefusalHasItsCodesCategory) {
  Prepare({});
  StartServe();
  // Twice: after the first IN_USE the plugin refreshes FM's state and retries once.
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -7 /* FM_ST_IN_USE */, 2).ok());
  ExpectCode(Allocate({PartitionBdfs(2)}), grpc::StatusCode::FAILED_PRECONDITION, "FM_ST_IN_USE",
             "FM_ST_IN_USE");
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */).ok());
  ExpectCode(Allocate({PartitionBdfs(1)}), grpc::StatusCode::INTERNAL, "FM_ST_GENERIC_ERROR",
             "FM_ST_GENERIC_ERROR");
  // (CONNECTION_NOT_VALID is retried by the FM client itself; NOT_READY is not.)
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -22 /* FM_ST_NOT_READY */).ok());
  ExpectCode(Allocate({PartitionBdfs(1)}), grpc::StatusCode::UNAVAILABLE, "FM_ST_NOT_READY",
             "FM_ST_NOT_READY");
  auto retried = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(retried.ok()) << Describe(retried.status);
}

// Another connection holds the journal's write lock: the append fails (SQLITE_BUSY), which is
// the plugin's own failure, not kubelet's: INTERNAL.
TEST_F(GrpcCodesTest, JournalThatCannotBeWrittenIsInternal) {
  Prepare({});
  StartServe();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  auto refused = Allocate({PartitionBdfs(1)});
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  ExpectCode(refused, grpc::StatusCode::INTERNAL, journal_.string(), "journal locked");
  EXPECT_TRUE(ActivePartitions().empty());
  auto retried = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(retried.ok()) << Describe(retried.status);
  ExpectJournalVerifies();
}

// A full disk: the journal lives on a small tmpfs that is then filled up. The append fails with
// SQLITE_FULL, which kubelet sees as RESOURCE_EXHAUSTED (an operator frees space). Needs root
// with mount permission.
class FullDiskTest : public GrpcCodesTest {
 protected:
  void TearDown() override {
    GrpcCodesTest::TearDown();  // stops serve before the file system goes away
    if (mounted_) ::umount2(mount_.c_str(), MNT_DETACH);
  }
  bool MountSmallDisk() {
    mount_ = dir() / "small-disk";
    std::filesystem::create_directories(mount_);
    mounted_ = ::mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=4m") == 0;
    return mounted_;
  }
  // Writes a file until the disk refuses more.
  void FillDisk() {
    std::ofstream filler(mount_ / "filler", std::ios::binary);
    const std::string block(64 * 1024, 'x');
    for (int i = 0; i < 1024 && filler.write(block.data(), block.size()); ++i) filler.flush();
  }
  std::filesystem::path mount_;
  bool mounted_ = false;
};

TEST_F(FullDiskTest, FullJournalDiskIsResourceExhausted) {
  Prepare({});
  if (!MountSmallDisk()) GTEST_SKIP() << "needs root with mount permission";
  journal_ = mount_ / "journal.db";
  StartServe();
  FillDisk();
  ExpectCode(Allocate({PartitionBdfs(1)}), grpc::StatusCode::RESOURCE_EXHAUSTED, journal_.string(),
             "full disk");
  EXPECT_TRUE(ActivePartitions().empty());
  std::filesystem::remove(mount_ / "filler");
  auto retried = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(retried.ok()) << Describe(retried.status);
  ExpectJournalVerifies();
}

}  // namespace
}  // namespace gfp::testing
