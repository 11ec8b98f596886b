// Watches and the list-watch cache against the fake API server: events, the size cap on one
// event (huge and endless), HTTP 410, idle and cancelled streams, resume after the server closes
// watches, relist on an in-stream or HTTP 410.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <thread>

#include "adapters/apiserver/list_watch.h"
#include "integration/apiserver/fake_server_fixture.h"
#include "unit/apiserver/log_capture.h"

namespace gfp::adapters::apiserver::testing {
namespace {

using apisim::FaultKind;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// What a ListWatcher reported, waited on by the test thread.
class Changes {
 public:
  void Record(const ObjectsByName& objects) {
    std::lock_guard lock(mu_);
    latest_ = objects;
    ++count_;
    cv_.notify_all();
  }
  // Waits up to 10 s for `done` to hold for the latest collection.
  bool WaitFor(const std::function<bool(const ObjectsByName&)>& done) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10),
                        [&] { return count_ > 0 && done(latest_); });
  }
  ObjectsByName latest() {
    std::lock_guard lock(mu_);
    return latest_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  ObjectsByName latest_;
  int count_ = 0;
};

int Generation(const ObjectsByName& objects, const std::string& name) {
  const auto it = objects.find(name);
  return it == objects.end() ? -1 : it->second["spec"]["pool"]["generation"].get<int>();
}

class WatchTest : public FakeServerTest {
 protected:
  void Create(const std::string& name, const std::string& node = "node-1") {
    auto created =
        writer_->Call({Verb::kCreate, "resourceslices", kSlices, Slice(name, node).dump(), ""});
    ASSERT_TRUE(created.ok() && created->code == 201);
  }
  void SetUp() override {
    FakeServerTest::SetUp();
    writer_ = Client();
  }
  ListWatchOptions NodeSlices() { return {"resourceslices", kSlices, "spec.nodeName=node-1", ""}; }
  ApiCall WatchFromNow() {
    return {Verb::kWatch, "resourceslices", kSlices + "?watch=true&resourceVersion=0", "", ""};
  }
  std::unique_ptr<ApiClient> writer_;
};

TEST_F(WatchTest, DeliversEventsUntilTheConsumerHasEnough) {
  Create("a");
  Create("b");
  auto client = Client();
  std::vector<std::string> seen;
  Status watched = client->Watch(WatchFromNow(), [&](const WatchEvent& event) {
    seen.push_back(event.type + " " + event.object["metadata"]["name"].get<std::string>());
    return seen.size() < 2;
  });
  EXPECT_TRUE(watched.ok()) << watched.message();
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED a", "ADDED b"}));
}

TEST_F(WatchTest, AHugeEventIsRefusedNotBuffered) {
  server_->AddFault({"watch", "resourceslices", FaultKind::kHugeEvent, 0, milliseconds(0), 1});
  int events = 0;
  Status watched = Client()->Watch(WatchFromNow(), [&](const WatchEvent&) { return ++events > 0; });
  EXPECT_EQ(watched.code(), ErrorCode::kResourceExhausted) << watched.message();
  EXPECT_NE(watched.message().find("4194304-byte limit"), std::string::npos) << watched.message();
  EXPECT_EQ(events, 0);
}

TEST_F(WatchTest, AnEndlessEventEndsAtTheCap) {
  server_->AddFault({"watch", "resourceslices", FaultKind::kEndlessEvent, 0, milliseconds(0), 1});
  ApiClientOptions options = FastOptions();
  options.max_watch_event_bytes = 256 * 1024;
  const auto start = Clock::now();
  Status watched =
      Client(Config(), options)->Watch(WatchFromNow(), [](const WatchEvent&) { return true; });
  EXPECT_EQ(watched.code(), ErrorCode::kResourceExhausted) << watched.message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST_F(WatchTest, AnHttp410IsHandedOnAsAnErrorEvent) {
  server_->AddFault({"watch", "resourceslices", FaultKind::kStatus, 410, milliseconds(0), 1});
  std::vector<int> codes;
  Status watched = Client()->Watch(WatchFromNow(), [&](const WatchEvent& event) {
    if (event.type == "ERROR") codes.push_back(WatchErrorCode(event));
    return true;
  });
  EXPECT_EQ(watched.code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(watched.message().find("HTTP 410"), std::string::npos) << watched.message();
  EXPECT_EQ(codes, std::vector<int>{410});
  EXPECT_EQ(observer_.Codes(), std::vector<int>{410});
}

TEST_F(WatchTest, ASilentWatchEndsAfterTheIdleTimeoutAndCancelEndsOnePromptly) {
  ApiClientOptions options = FastOptions();
  options.watch_idle_timeout = milliseconds(400);
  auto client = Client(Config(), options);
  auto start = Clock::now();
  Status idle = client->Watch(WatchFromNow(), [](const WatchEvent&) { return true; });
  EXPECT_EQ(idle.code(), ErrorCode::kDeadlineExceeded) << idle.message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));

  auto patient = Client();  // the default idle timeout: 90 s
  std::thread cancel([&] {
    std::this_thread::sleep_for(milliseconds(300));
    patient->Cancel();
  });
  start = Clock::now();
  Status cancelled = patient->Watch(WatchFromNow(), [](const WatchEvent&) { return true; });
  cancel.join();
  EXPECT_TRUE(cancelled.ok()) << cancelled.message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
}

TEST_F(WatchTest, ListWatcherKeepsTheNodesSlicesThroughCreateModifyAndDelete) {
  Create("mine-1");
  Create("theirs", "node-2");
  auto client = Client();
  Changes changes;
  ListWatcher watcher(*client, NodeSlices(), [&](const ObjectsByName& o) { changes.Record(o); });
  watcher.Start();
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 1; }));
  EXPECT_TRUE(changes.latest().count("mine-1"));
  Create("mine-2");
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.count("mine-2") == 1; }));
  ASSERT_TRUE(
      server_->ModifySlice("mine-1", [](nlohmann::json& s) { s["spec"]["pool"]["generation"] = 7; })
          .ok());
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return Generation(o, "mine-1") == 7; }));
  EXPECT_EQ(server_->WipeSlices("node-1"), 2);
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.empty(); }));
  watcher.Stop();
  EXPECT_EQ(watcher.lists(), 1);
}

TEST_F(WatchTest, ListWatcherResumesAfterTheServerClosesWatchesWithoutRelisting) {
  Create("mine-1");
  auto client = Client();
  Changes changes;
  ListWatcher watcher(*client, NodeSlices(), [&](const ObjectsByName& o) { changes.Record(o); });
  watcher.Start();
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 1; }));
  Create("mine-2");  // seen through the watch: the stream is open
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 2; }));
  server_->CloseWatches();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (watcher.watches() < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_GE(watcher.watches(), 2);
  Create("mine-3");
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 3; }));
  watcher.Stop();
  EXPECT_EQ(watcher.lists(), 1);
  EXPECT_EQ(server_->CallCount("list", "resourceslices"), 1);
}

TEST_F(WatchTest, ListWatcherRelistsOnAnInStream410) {
  Create("mine-1");
  auto client = Client();
  Changes changes;
  bool first = true;
  ListWatcher watcher(*client, NodeSlices(), [&](const ObjectsByName& o) {
    if (first) {  // between the list and its watch: history moves on and is compacted
      first = false;
      EXPECT_TRUE(server_
                      ->ModifySlice("mine-1",
                                    [](nlohmann::json& s) { s["spec"]["pool"]["generation"] = 3; })
                      .ok());
      server_->CompactHistory();
    }
    changes.Record(o);
  });
  watcher.Start();
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return Generation(o, "mine-1") == 3; }));
  watcher.Stop();
  EXPECT_EQ(watcher.lists(), 2);
  EXPECT_TRUE(Sleeps().empty());  // a relist is the remedy, not a failure to back off from
}

TEST_F(WatchTest, ListWatcherRelistsOnAnHttp410AndBacksOffAfterAHugeEvent) {
  Create("mine-1");
  server_->AddFault({"watch", "resourceslices", FaultKind::kStatus, 410, milliseconds(0), 1});
  auto client = Client();
  Changes changes;
  ListWatcher watcher(*client, NodeSlices(), [&](const ObjectsByName& o) { changes.Record(o); });
  watcher.Start();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (watcher.watches() < 2 && Clock::now() < deadline) {  // relisted, watching again
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(watcher.lists(), 2);
  Create("mine-2");  // seen through the new watch: its stream is open
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 2; }));
  server_->AddFault({"watch", "resourceslices", FaultKind::kHugeEvent, 0, milliseconds(0), 1});
  server_->CloseWatches();
  while (Sleeps().empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  Create("mine-3");
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 3; }));
  watcher.Stop();
  EXPECT_EQ(Sleeps(), std::vector<long long>{199});  // one failure: the huge event
  EXPECT_EQ(changes.latest().count("huge"), 0u);
}

TEST_F(WatchTest, ListWatcherBacksOffWhileForbiddenAndWarnsOncePerReason) {
  LogCapture log;
  server_->SetForbidden("list", "resourceslices", true);
  auto client = Client();
  Changes changes;
  ListWatcher watcher(*client, NodeSlices(), [&](const ObjectsByName& o) { changes.Record(o); });
  watcher.Start();
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Sleeps().size() < 3 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  server_->SetForbidden("list", "resourceslices", false);
  Create("mine-1");
  ASSERT_TRUE(changes.WaitFor([](const ObjectsByName& o) { return o.size() == 1; }));
  watcher.Stop();
  const auto sleeps = Sleeps();
  ASSERT_GE(sleeps.size(), 3u);
  EXPECT_EQ(std::vector<long long>(sleeps.begin(), sleeps.begin() + 3),
            (std::vector<long long>{199, 399, 799}));
  EXPECT_EQ(log.Count("warning", "resourceslices watcher: list resourceslices answered HTTP 403"),
            1)
      << log.text();
  EXPECT_EQ(log.Count("error", "list resourceslices with 403 Forbidden"), 1) << log.text();
}

}  // namespace
}  // namespace gfp::adapters::apiserver::testing
