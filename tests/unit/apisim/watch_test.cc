// Watches of ResourceSlices: events in order after a resourceVersion, resuming, live events,
// field selectors, 410 Expired after compaction (an ERROR event, or plain HTTP 410 as a fault),
// CloseWatches, timeoutSeconds.
#include <future>
#include <thread>

#include "unit/apisim/apisim_fixture.h"

namespace gfp::apisim::testing {
namespace {

std::string WatchPath(std::uint64_t from, int seconds, const std::string& extra = "") {
  return kSlices + "?watch=true&allowWatchBookmarks=true&resourceVersion=" + std::to_string(from) +
         "&timeoutSeconds=" + std::to_string(seconds) + extra;
}

std::vector<std::string> Types(const std::vector<nlohmann::json>& events) {
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e["type"]);
  return types;
}

TEST_F(ApiSimTest, WatchSeesAddedModifiedDeletedInOrderAndResumes) {
  StartServer();
  server_->PutNode("node-a");  // resourceVersion 0 would mean "from now, current slices first"
  const std::uint64_t start = server_->ResourceVersion();
  Create("s1", "node-a");
  ASSERT_TRUE(
      server_->ModifySlice("s1", [](nlohmann::json& s) { s["spec"]["pool"]["generation"] = 7; })
          .ok());
  const std::uint64_t after_modify = server_->ResourceVersion();
  ASSERT_EQ(server_->WipeSlices("node-a"), 1);

  HttpReply reply = Get(WatchPath(start, 1));
  ASSERT_EQ(reply.result, CURLE_OK) << curl_easy_strerror(reply.result);
  const auto events = WatchLines(reply.body);
  EXPECT_EQ(Types(events), (std::vector<std::string>{"ADDED", "MODIFIED", "DELETED"}));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1]["object"]["spec"]["pool"]["generation"], 7);
  EXPECT_EQ(events[1]["object"]["metadata"]["resourceVersion"], std::to_string(after_modify));

  const auto resumed = WatchLines(Get(WatchPath(after_modify, 1)).body);
  EXPECT_EQ(Types(resumed), (std::vector<std::string>{"DELETED"}));
}

TEST_F(ApiSimTest, WatchStreamsLiveEventsForItsNodeOnly) {
  StartServer();
  server_->PutNode("node-a");  // resourceVersion 0 would mean "from now, current slices first"
  const std::uint64_t start = server_->ResourceVersion();
  auto watch = std::async(std::launch::async, [&] {
    return Get(WatchPath(start, 2, "&fieldSelector=spec.nodeName%3Dnode-a"));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Create("b1", "node-b");
  Create("a1", "node-a");
  server_->WipeSlices("node-a");
  HttpReply reply = watch.get();
  EXPECT_EQ(reply.result, CURLE_OK) << curl_easy_strerror(reply.result);
  const auto events = WatchLines(reply.body);
  EXPECT_EQ(Types(events), (std::vector<std::string>{"ADDED", "DELETED"}));
  EXPECT_GE(reply.seconds, 1.9);  // timeoutSeconds=2 ended it, not before
}

TEST_F(ApiSimTest, WatchWithoutResourceVersionStartsWithCurrentSlices) {
  StartServer();
  Create("s1", "node-a");
  const auto events = WatchLines(Get(kSlices + "?watch=true&timeoutSeconds=1").body);
  EXPECT_EQ(Types(events), (std::vector<std::string>{"ADDED"}));
}

TEST_F(ApiSimTest, WatchFromBeforeCompactionGets410ExpiredErrorEvent) {
  StartServer();
  server_->PutNode("node-a");  // resourceVersion 0 would mean "from now, current slices first"
  const std::uint64_t start = server_->ResourceVersion();
  Create("s1", "node-a");
  server_->CompactHistory();
  HttpReply reply = Get(WatchPath(start, 5));
  EXPECT_EQ(reply.code, 200);
  EXPECT_LT(reply.seconds, 2.0);  // closed after the error, not at the timeout
  const auto events = WatchLines(reply.body);
  ASSERT_EQ(events.size(), 1u) << reply.body;
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["kind"], "Status");
  EXPECT_EQ(events[0]["object"]["code"], 410);
  EXPECT_EQ(events[0]["object"]["reason"], "Expired");
  // From the current version the watch works.
  EXPECT_TRUE(WatchLines(Get(WatchPath(server_->ResourceVersion(), 1)).body).empty());
}

TEST_F(ApiSimTest, Plain410FaultOnWatch) {
  StartServer();
  server_->AddFault(
      {.verb = "watch", .resource = "resourceslices", .kind = FaultKind::kStatus, .code = 410});
  HttpReply reply = Get(WatchPath(0, 1));
  EXPECT_EQ(reply.code, 410);
  EXPECT_EQ(reply.Json()["reason"], "Expired");
  EXPECT_EQ(Get(WatchPath(0, 1)).code, 200);  // count 1: used up
}

TEST_F(ApiSimTest, CloseWatchesEndsOpenStreamsAtOnce) {
  StartServer();
  auto watch = std::async(std::launch::async, [&] { return Get(WatchPath(0, 30)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  server_->CloseWatches();
  ASSERT_EQ(watch.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  HttpReply reply = watch.get();
  EXPECT_EQ(reply.result, CURLE_PARTIAL_FILE) << curl_easy_strerror(reply.result);
  // A new watch after that works.
  EXPECT_EQ(Get(WatchPath(server_->ResourceVersion(), 1)).result, CURLE_OK);
}

}  // namespace
}  // namespace gfp::apisim::testing
