// The gRPC status code kubelet gets when the real binary refuses a call (issue 9 item 4): the
// caller's mistake is INVALID_ARGUMENT, a state that does not allow it FAILED_PRECONDITION,
// Fabric Manager not usable UNAVAILABLE, an FM refusal its code's category, a journal that
// cannot be written INTERNAL (RESOURCE_EXHAUSTED when full). The messages stay as they were.
#include <sqlite3.h>
#include <sys/mount.h>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

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

// Every code FM can refuse an activation with, driven through Allocate of the real binary: kubelet
// gets the code's category (written out here from docs/bad-input.md's table, not taken from
// refusal_code.cc), the message names the code, nothing stays active, and the next Allocate of the
// same GPUs works. Left out: -7 IN_USE and -9 CONNECTION_NOT_VALID, which the plugin retries (their
// own tests are above and in fm_client_test.cc).
TEST_F(GrpcCodesTest, EveryActivationRefusalCodeReachesKubeletAsItsCategory) {
  using C = grpc::StatusCode;
  const std::vector<std::tuple<int, const char*, C>> codes = {
      {-1, "FM_ST_BADPARAM", C::INVALID_ARGUMENT},
      {-2, "FM_ST_GENERIC_ERROR", C::INTERNAL},
      {-3, "FM_ST_NOT_SUPPORTED", C::FAILED_PRECONDITION},
      {-4, "FM_ST_UNINITIALIZED", C::FAILED_PRECONDITION},
      {-5, "FM_ST_TIMEOUT", C::DEADLINE_EXCEEDED},
      {-6, "FM_ST_VERSION_MISMATCH", C::FAILED_PRECONDITION},
      {-8, "FM_ST_NOT_CONFIGURED", C::UNAVAILABLE},
      {-10, "FM_ST_NVLINK_ERROR", C::INTERNAL},
      {-11, "FM_ST_RESOURCE_BAD", C::NOT_FOUND},
      {-12, "FM_ST_RESOURCE_IN_USE", C::FAILED_PRECONDITION},
      {-13, "FM_ST_RESOURCE_NOT_IN_USE", C::FAILED_PRECONDITION},
      {-14, "FM_ST_RESOURCE_EXHAUSTED", C::RESOURCE_EXHAUSTED},
      {-15, "FM_ST_RESOURCE_NOT_READY", C::UNAVAILABLE},
      {-16, "FM_ST_PARTITION_EXISTS", C::ALREADY_EXISTS},
      {-17, "FM_ST_PARTITION_ID_IN_USE", C::FAILED_PRECONDITION},
      {-18, "FM_ST_PARTITION_ID_NOT_IN_USE", C::FAILED_PRECONDITION},
      {-19, "FM_ST_PARTITION_NAME_IN_USE", C::ALREADY_EXISTS},
      {-20, "FM_ST_PARTITION_NAME_NOT_IN_USE", C::NOT_FOUND},
      {-21, "FM_ST_PARTITION_ID_NAME_MISMATCH", C::INVALID_ARGUMENT},
      {-22, "FM_ST_NOT_READY", C::UNAVAILABLE},
      {-23, "FM_ST_RESOURCE_USED_IN_THIS_PARTITION", C::FAILED_PRECONDITION},
      {-24, "FM_ST_RESOURCE_USED_IN_ANOTHER_PARTITION", C::FAILED_PRECONDITION},
      {-25, "FM_ST_PARTITION_MISWIRED_TRUNKS", C::INTERNAL},
      {-26, "FM_ST_PARTITION_INSUFFICIENT_TRUNKS", C::INTERNAL},
      {-27, "FM_ST_PARTITION_MISSING_SWITCHES", C::INTERNAL},
      {-28, "FM_ST_PARTITION_NETWORK_CONFIG_ERROR", C::INTERNAL},
      {-29, "FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR", C::INTERNAL},
      {-42, "FM_ST_UNKNOWN(-42)", C::INTERNAL},
  };
  Prepare({});
  StartServe();
  for (const auto& [code, name, grpc_code] : codes) {
    ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", code).ok());
    ExpectCode(Allocate({PartitionBdfs(1)}), grpc_code,
               "could not activate partition 1: " + std::string(name), name);
    EXPECT_TRUE(ActivePartitions().empty()) << name;
  }
  auto retried = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(retried.ok()) << Describe(retried.status);
  ExpectJournalVerifies();
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
