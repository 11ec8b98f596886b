// ApiClient against a misbehaving fake API server: retries with backoff, timeouts, a slow-loris
// answer, dropped connections, garbage and huge bodies, cancellation.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "integration/apiserver/fake_server_fixture.h"

namespace gfp::adapters::apiserver::testing {
namespace {

using apisim::Fault;
using apisim::FaultKind;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class ApiClientFaultTest : public FakeServerTest {
 protected:
  void SetUp() override {
    FakeServerTest::SetUp();
    server_->PutNode("node-1");
  }
  const ApiCall get_{Verb::kGet, "nodes", "/api/v1/nodes/node-1", "", ""};
};

TEST_F(ApiClientFaultTest, Retries500AndDroppedConnectionsWithBackoffThenSucceeds) {
  server_->AddFault({"get", "nodes", FaultKind::kStatus, 500, milliseconds(0), 2});
  server_->AddFault({"get", "nodes", FaultKind::kDrop, 0, milliseconds(0), 1});
  auto client = Client();
  auto got = client->Call(get_);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->code, 200);
  EXPECT_EQ(observer_.Codes(), (std::vector<int>{500, 500, 0, 200}));
  EXPECT_EQ(Sleeps(), (std::vector<long long>{199, 399, 799}));
}

TEST_F(ApiClientFaultTest, GivesUpAfterTheAttemptsReturningTheLastAnswer) {
  server_->AddFault({"get", "nodes", FaultKind::kStatus, 503, milliseconds(0), -1});
  auto got = Client()->Call(get_);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->code, 503);  // a definite answer, for the caller to judge
  EXPECT_EQ(server_->CallCount("get", "nodes"), 4);
  EXPECT_EQ(Sleeps().size(), 3u);
}

TEST_F(ApiClientFaultTest, NoAnswerAfterEveryAttemptIsUnavailableNamingVerbAndResource) {
  server_->AddFault({"get", "nodes", FaultKind::kDrop, 0, milliseconds(0), -1});
  auto got = Client()->Call(get_);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(got.status().message().find("did not answer get nodes"), std::string::npos)
      << got.status().message();
  EXPECT_NE(got.status().message().find("after 4 attempts"), std::string::npos);
  EXPECT_EQ(observer_.Codes(), (std::vector<int>{0, 0, 0, 0}));
}

TEST_F(ApiClientFaultTest, ASlowAnswerTimesOut) {
  server_->AddFault({"get", "nodes", FaultKind::kDelay, 0, milliseconds(3000), 1});
  ApiClientOptions options = FastOptions();
  options.timeout = milliseconds(300);
  options.attempts = 1;
  const auto start = Clock::now();
  auto got = Client(Config(), options)->Call(get_);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("timeout 300 ms"), std::string::npos)
      << got.status().message();
}

// kubelet's NodePrepareResources bounds the whole call: every attempt and the waits between them
// end by the deadline, though the timeout and the attempts would allow ten times as long.
TEST_F(ApiClientFaultTest, ADeadlineBoundsTheCallRetriesIncluded) {
  server_->AddFault({"get", "nodes", FaultKind::kDelay, 0, milliseconds(5000), -1});
  ApiClientOptions options;
  options.timeout = milliseconds(2000);
  options.attempts = 4;
  options.backoff_base = milliseconds(50);
  options.backoff_cap = milliseconds(50);
  auto client = Client(Config(), options);
  const auto start = Clock::now();
  auto got = client->Call(get_, start + milliseconds(700));
  const auto took = Clock::now() - start;
  EXPECT_LT(took, milliseconds(1500));
  EXPECT_GE(took, milliseconds(650));
  ASSERT_FALSE(got.ok());
  // A deadline already passed sends nothing at all.
  const int sent = server_->CallCount("get", "nodes");
  auto late = client->Call(get_, Clock::now() - milliseconds(1));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.status().message().find("not sent: its caller's deadline passed"),
            std::string::npos)
      << late.status().message();
  EXPECT_EQ(server_->CallCount("get", "nodes"), sent);
}

TEST_F(ApiClientFaultTest, ASlowLorisAnswerIsBoundedByTheTimeout) {
  server_->AddFault({"get", "nodes", FaultKind::kSlowLoris, 0, milliseconds(0), 1});
  ApiClientOptions options = FastOptions();
  options.timeout = milliseconds(1500);  // one byte a second keeps arriving
  const auto start = Clock::now();
  auto got = Client(Config(), options)->Call(get_);  // then the retry succeeds
  EXPECT_LT(Clock::now() - start, milliseconds(3500));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->code, 200);
  EXPECT_EQ(observer_.Codes(), (std::vector<int>{0, 200}));
}

TEST_F(ApiClientFaultTest, GarbageIsAClearErrorFromJson) {
  server_->AddFault({"get", "nodes", FaultKind::kGarbage, 0, milliseconds(0), 1});
  auto got = Client()->Call(get_);
  ASSERT_TRUE(got.ok());
  auto json = got->Json();
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("answer to get nodes (HTTP 200"), std::string::npos)
      << json.status().message();
}

TEST_F(ApiClientFaultTest, AnAnswerBiggerThanTheCapIsRefused) {
  auto client = Client();
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(client
                  ->Call({Verb::kCreate, "resourceslices", kSlices,
                          Slice("slice-" + std::to_string(i)).dump(), ""})
                  ->code,
              201);
  }
  ApiClientOptions options = FastOptions();
  options.max_body_bytes = 2048;
  auto listed = Client(Config(), options)->Call({Verb::kList, "resourceslices", kSlices, "", ""});
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(listed.status().message().find("list resourceslices is bigger than 2048 bytes"),
            std::string::npos)
      << listed.status().message();
  EXPECT_EQ(server_->CallCount("list", "resourceslices"), 1);  // not retried
}

TEST_F(ApiClientFaultTest, CancelEndsABackoffWaitPromptly) {
  server_->AddFault({"get", "nodes", FaultKind::kStatus, 500, milliseconds(0), -1});
  ApiClientOptions options;
  options.backoff_base = milliseconds(20000);
  options.backoff_cap = milliseconds(20000);
  auto client = Client(Config(), options);
  std::thread cancel([&] {
    std::this_thread::sleep_for(milliseconds(300));
    client->Cancel();
  });
  const auto start = Clock::now();
  auto got = client->Call(get_);
  cancel.join();
  EXPECT_LT(Clock::now() - start, milliseconds(3000));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->code, 500);
  EXPECT_EQ(server_->CallCount("get", "nodes"), 1);
}

// Shutdown with a pass over many claims under way: after Cancel nothing more is sent, so each
// of them does not cost one more timeout against a server that does not answer.
TEST_F(ApiClientFaultTest, ACallAfterCancelIsNotSent) {
  auto client = Client(Config(), ApiClientOptions{});
  client->Cancel();
  const auto start = Clock::now();
  auto got = client->Call(get_);
  EXPECT_LT(Clock::now() - start, milliseconds(100));
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("not sent: the client is shutting down"), std::string::npos)
      << got.status().message();
  EXPECT_EQ(server_->CallCount("get", "nodes"), 0);
}

}  // namespace
}  // namespace gfp::adapters::apiserver::testing
