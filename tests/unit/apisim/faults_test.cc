// Injected faults: status codes, drops, garbage, delays, slow loris, huge and endless events;
// and a prompt shutdown with a watch and a slow-loris answer open.
#include <future>
#include <thread>

#include "sim/apiserver/watch_stream.h"
#include "unit/apisim/apisim_fixture.h"

namespace gfp::apisim::testing {
namespace {

const std::string kNode = "/api/v1/nodes/node-a";

TEST_F(ApiSimTest, StatusFaultHitsItsCountThenStops) {
  StartServer();
  server_->PutNode("node-a");
  server_->AddFault(
      {.verb = "get", .resource = "nodes", .kind = FaultKind::kStatus, .code = 500, .count = 2});
  server_->AddFault({.verb = "list", .resource = "*", .kind = FaultKind::kStatus, .code = 429});
  for (int i = 0; i < 2; ++i) {
    HttpReply reply = Get(kNode);
    EXPECT_EQ(reply.code, 500);
    EXPECT_EQ(reply.Json()["kind"], "Status");
  }
  EXPECT_EQ(Get(kNode).code, 200);
  EXPECT_EQ(Get(kSlices).code, 429);
  EXPECT_EQ(Get(kSlices).code, 200);
  EXPECT_EQ(server_->Requests()[0].code, 500);
}

TEST_F(ApiSimTest, DropClosesWithoutAnAnswer) {
  StartServer();
  server_->PutNode("node-a");
  server_->AddFault({.verb = "get", .resource = "nodes", .kind = FaultKind::kDrop});
  HttpReply reply = Get(kNode);
  EXPECT_EQ(reply.result, CURLE_GOT_NOTHING) << curl_easy_strerror(reply.result);
  EXPECT_EQ(server_->Requests().back().code, 0);
  EXPECT_EQ(Get(kNode).code, 200);
}

TEST_F(ApiSimTest, GarbageIs200WithABodyThatIsNotJson) {
  StartServer();
  server_->PutNode("node-a");
  server_->AddFault({.verb = "*", .resource = "*", .kind = FaultKind::kGarbage});
  HttpReply reply = Get(kNode);
  EXPECT_EQ(reply.code, 200);
  EXPECT_TRUE(reply.Json().is_discarded()) << reply.body;
}

TEST_F(ApiSimTest, DelayAnswersLateButCorrectly) {
  StartServer();
  server_->PutNode("node-a");
  server_->AddFault({.verb = "get",
                     .resource = "nodes",
                     .kind = FaultKind::kDelay,
                     .delay = std::chrono::milliseconds(600)});
  HttpReply reply = Get(kNode);
  EXPECT_EQ(reply.code, 200);
  EXPECT_GE(reply.seconds, 0.55);
  CurlOptions impatient = Client();
  impatient.timeout_ms = 200;
  server_->AddFault({.verb = "get",
                     .resource = "nodes",
                     .kind = FaultKind::kDelay,
                     .delay = std::chrono::milliseconds(600)});
  EXPECT_EQ(Call("GET", server_->url() + kNode, "", impatient).result, CURLE_OPERATION_TIMEDOUT);
}

TEST_F(ApiSimTest, SlowLorisTricklesUntilTheClientGivesUp) {
  StartServer();
  server_->AddFault({.verb = "get", .resource = "nodes", .kind = FaultKind::kSlowLoris});
  CurlOptions client = Client();
  client.timeout_ms = 2500;
  HttpReply reply = Call("GET", server_->url() + kNode, "", client);
  EXPECT_EQ(reply.result, CURLE_OPERATION_TIMEDOUT);
  EXPECT_EQ(reply.code, 200);
  EXPECT_GE(reply.body.size(), 1u);
  EXPECT_LE(reply.body.size(), 3u);  // a byte a second
}

TEST_F(ApiSimTest, HugeEventComesFirstThenTheStream) {
  StartServer();
  server_->AddFault({.verb = "watch", .resource = "*", .kind = FaultKind::kHugeEvent});
  server_->AddFault({.verb = "get",
                     .resource = "*",
                     .kind = FaultKind::kHugeEvent});  // watch only: never matches a get
  Create("s1", "node-a");
  CurlOptions client = Client();
  client.timeout_ms = 10000;
  HttpReply reply =
      Call("GET", server_->url() + kSlices + "?watch=true&timeoutSeconds=1", "", client);
  const auto events = WatchLines(reply.body);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_GE(events[0].dump().size(), kHugeEventBytes);
  EXPECT_EQ(events[1]["object"]["metadata"]["name"], "s1");
}

TEST_F(ApiSimTest, EndlessEventNeverEndsItsLine) {
  StartServer();
  server_->AddFault(
      {.verb = "watch", .resource = "resourceslices", .kind = FaultKind::kEndlessEvent});
  CurlOptions client = Client();
  std::size_t seen = 0;
  bool newline = false;
  client.on_data = [&](std::string_view piece) {
    seen += piece.size();
    newline = newline || piece.find('\n') != std::string_view::npos;
    return seen < 4 * 1024 * 1024;  // a client with a line limit gives up here
  };
  HttpReply reply = Call("GET", server_->url() + kSlices + "?watch=true", "", client);
  EXPECT_EQ(reply.result, CURLE_WRITE_ERROR);
  EXPECT_GE(seen, 4u * 1024 * 1024);
  EXPECT_FALSE(newline);
}

TEST_F(ApiSimTest, ShutdownIsPromptWithAnOpenWatchAndASlowLoris) {
  StartServer();
  server_->PutNode("node-a");
  server_->AddFault({.verb = "get", .resource = "nodes", .kind = FaultKind::kSlowLoris});
  CurlOptions client = Client();
  client.timeout_ms = 30000;
  const std::string url = server_->url();
  auto watch = std::async(std::launch::async,
                          [&] { return Call("GET", url + kSlices + "?watch=true", "", client); });
  auto slow = std::async(std::launch::async, [&] { return Call("GET", url + kNode, "", client); });
  // 300 ms: the slow answer is 700 ms from its next byte, a wait a missed stop flag would show.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  server_.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 0.4) << seconds;  // handlers look at the stop flag every 20-50 ms
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  ASSERT_EQ(slow.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_NE(watch.get().result, CURLE_OK);  // cut, not ended cleanly
  EXPECT_NE(slow.get().result, CURLE_OK);
}

}  // namespace
}  // namespace gfp::apisim::testing
