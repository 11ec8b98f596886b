// With --log-level=debug every Fabric Manager call is logged: its name and arguments, the FM
// return code's name and how long it took.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <regex>
#include <sstream>

#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using testing::FmSimTest;

// Sends the default logger to a string for the duration of a test.
class FmLogging : public FmSimTest {
 protected:
  void SetUp() override {
    FmSimTest::SetUp();
    previous_ = spdlog::default_logger();
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("", sink);
    logger->set_level(spdlog::level::debug);
    logger->set_pattern("[%l] %v");
    spdlog::set_default_logger(logger);
  }
  void TearDown() override {
    spdlog::set_default_logger(previous_);
    FmSimTest::TearDown();
  }
  std::string Log() const { return out_.str(); }

  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

bool HasLine(const std::string& log, const std::string& pattern) {
  return std::regex_search(log, std::regex(pattern));
}

TEST_F(FmLogging, EveryCallIsADebugLineWithCodeAndDuration) {
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Activate(1).ok());
  EXPECT_FALSE(client->Activate(1).ok());  // IN_USE
  ASSERT_TRUE(client->Deactivate(1).ok());
  ASSERT_TRUE(client->GetSupportedPartitions().ok());
  const std::string log = Log();
  const std::string ms = R"( in [0-9]+\.[0-9] ms)";
  // IN_USE when an earlier test of this process initialised the library already.
  EXPECT_TRUE(
      HasLine(log, R"(\[debug\] Fabric Manager call fmLibInit -> FM_ST_(SUCCESS|IN_USE))" + ms))
      << log;
  EXPECT_TRUE(HasLine(log, R"(\[debug\] Fabric Manager call fmConnect\(/run/nvidia-fabricmanager/)"
                           R"(fmpm\.sock, v2\) -> FM_ST_SUCCESS)" +
                               ms))
      << log;
  EXPECT_TRUE(HasLine(
      log, R"(\[debug\] Fabric Manager call fmActivateFabricPartition\(1\) -> FM_ST_SUCCESS)" + ms))
      << log;
  EXPECT_TRUE(HasLine(
      log, R"(\[debug\] Fabric Manager call fmActivateFabricPartition\(1\) -> FM_ST_IN_USE)" + ms))
      << log;
  EXPECT_TRUE(HasLine(
      log,
      R"(\[debug\] Fabric Manager call fmDeactivateFabricPartition\(1\) -> FM_ST_SUCCESS)" + ms))
      << log;
  EXPECT_TRUE(HasLine(
      log, R"(\[debug\] Fabric Manager call fmGetSupportedFabricPartitions -> FM_ST_SUCCESS)" + ms))
      << log;
}

TEST_F(FmLogging, NothingAtInfoLevel) {
  spdlog::default_logger()->set_level(spdlog::level::info);
  auto client = NewClient();
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Activate(1).ok());
  EXPECT_EQ(Log().find("fmActivateFabricPartition"), std::string::npos) << Log();
}

// A call past the deadline is a warning naming the call, the deadline and what the client does
// about it (docs/bad-input.md §8, FM_ST_TIMEOUT).
TEST_F(FmLogging, CallPastItsDeadlineIsAWarningNamingTheCall) {
  FabricManagerConfig config = Config();
  config.call_deadline = std::chrono::milliseconds(100);
  auto client = NewClient(config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().SetLatency("fmGetSupportedFabricPartitions", 400).ok());
  EXPECT_FALSE(client->GetSupportedPartitions().ok());
  EXPECT_TRUE(HasLine(Log(),
                      R"(\[warning\] Fabric Manager call fmGetSupportedFabricPartitions did not )"
                      R"(return within 100 ms; connection marked broken)"))
      << Log();
  ASSERT_TRUE(sim().SetLatency("fmGetSupportedFabricPartitions", 0).ok());
}

}  // namespace
}  // namespace gfp::adapters::fm
