// A full disk while serve runs (issue 8), in-process so the journal can be filled at the right
// moment (store::Journal::SetMaxPageCountForTesting): the fake node, the simulated FM library
// and the fake kubelet are the serve fixture's, the plugin is a Service in this process.
#include <gmock/gmock.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "integration/plugin/serve_fixture.h"
#include "plugin/service.h"
#include "statemachine/event_codec.h"

namespace gfp::testing {
namespace {

using ::testing::HasSubstr;

class JournalFailureTest : public ServeFixture {
 protected:
  void SetUp() override {
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
    spdlog::default_logger()->sinks().push_back(sink_);
    spdlog::set_level(spdlog::level::debug);
  }
  void TearDown() override {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    spdlog::set_level(spdlog::level::info);
    ServeFixture::TearDown();
  }

  std::unique_ptr<plugin::Service> CreateService() {
    ::setenv("NVFM_SIM_STATE", fm_state_.c_str(), 1);
    auto config = simworld::ServeConfigFor(
        WorldSetup(), node_, {{"--reconcile-interval", "100ms"}, {"--release-grace", "300ms"}});
    EXPECT_TRUE(config.ok()) << config.status().message();
    if (!config.ok()) return nullptr;
    const plugin::ServeConfig& c = *config;
    auto service = plugin::Service::Create(c, "test");
    EXPECT_TRUE(service.ok()) << service.status().message();
    return service.ok() ? std::move(service).value() : nullptr;
  }

  // A full disk: the journal may not grow. Appends that fit in free space still succeed, so
  // append ever smaller events until even a small one fails.
  static bool FillJournal(engine::Engine& engine) {
    if (!engine.journal().SetMaxPageCountForTesting(1).ok()) return false;
    for (std::size_t size : {4096u, 512u, 64u, 1u}) {
      bool failed = false;
      for (int i = 0; i < 5000 && !failed; ++i) {
        auto r = engine.Execute(
            sm::ObserveKubeletRestart{plugin::core::SystemClock(), std::string(size, 'x')});
        failed = !r.ok();
      }
      if (!failed) return false;
    }
    return true;
  }

  std::size_t LogLinesWith(const std::string& needle, bool debug_too) {
    std::istringstream lines(log_.str());
    std::size_t count = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.find(needle) == std::string::npos) continue;
      if (!debug_too && line.find("[debug]") != std::string::npos) continue;
      ++count;
    }
    return count;
  }

  std::vector<events::Event> JournalEvents(engine::Engine& engine) {
    std::vector<events::Event> out;
    Status scanned = engine.journal().ForEach(1, 0, [&](const store::StoredEvent& e) {
      auto decoded = sm::DecodeEvent(e.type, e.time_unix_micros, e.payload);
      if (decoded.ok()) out.push_back(std::move(decoded).value());
      return Status::Ok();
    });
    EXPECT_TRUE(scanned.ok()) << scanned.message();
    return out;
  }

  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// The outcome of an activation cannot be journaled: the request is later rejected saying so (not
// "the plugin stopped"), and the retries of the resolution are not logged on every pass.
TEST_F(JournalFailureTest, FailedOutcomeAppendIsNamedAndLoggedOnce) {
  Prepare({});
  auto service = CreateService();
  ASSERT_NE(service, nullptr);
  auto& core = service->core();
  ASSERT_TRUE(core.SyncFabricManager());
  ASSERT_TRUE(fm_->DelayNext("fmActivateFabricPartition", 1500).ok());
  const auto fm_holds_the_call = [&] {
    auto in_flight = fm_->DelayedCallsInFlight();
    return in_flight.ok() && *in_flight == 1;
  };
  std::atomic<bool> filled{false}, filled_in_time{false};
  std::thread filler([&] {
    // FM has the call, so the saga's intent is durable (it is journaled first): fill the disk
    // while FM holds the reply.
    if (!WaitUntil(fm_holds_the_call, 10s, 2ms)) return;
    filled = FillJournal(core.engine());
    filled_in_time = fm_holds_the_call();
  });
  auto allocated = core.Allocate(resource_, {PartitionBdfs(3)});
  filler.join();
  ASSERT_TRUE(filled) << "the journal never filled up";
  ASSERT_TRUE(filled_in_time) << "the journal filled only after FM answered (a slow machine?)";
  EXPECT_FALSE(allocated.ok()) << "the outcome could not be journaled, yet Allocate succeeded";

  const std::size_t before = LogLinesWith("partition 3", false);
  for (int pass = 0; pass < 5; ++pass) core.SyncFabricManager();
  EXPECT_LE(LogLinesWith("partition 3", false) - before, 1u)
      << "the same failure is logged on every retry:\n"
      << log_.str();

  ASSERT_TRUE(core.engine().journal().SetMaxPageCountForTesting(1'073'741'823).ok());
  EXPECT_TRUE(core.SyncFabricManager());
  std::string reason;
  for (const auto& e : JournalEvents(core.engine())) {
    if (e.has_allocation_rejected()) reason = e.allocation_rejected().reason();
  }
  EXPECT_THAT(reason, HasSubstr("the journal append failed"));
  EXPECT_EQ(reason.find("the plugin stopped"), std::string::npos) << reason;
}

// A snapshot that cannot be saved at shutdown is reported by Run, not ignored.
TEST_F(JournalFailureTest, FailedShutdownSnapshotIsReported) {
  Prepare({});
  auto service = CreateService();
  ASSERT_NE(service, nullptr);
  auto& engine = service->core().engine();
  for (int i = 0; i < 300; ++i) {  // seqs for the snapshots below
    ASSERT_TRUE(
        engine.Execute(sm::ObserveKubeletRestart{plugin::core::SystemClock(), "padding"}).ok());
  }
  std::atomic<bool> stop{false};
  Status result;
  std::thread runner([&] { result = service->Run(stop); });
  const bool registered = WaitUntil(
      [&] {
        auto r = kubelet_->Resource(resource_);
        return r && r->connected;
      },
      15s);
  const bool filled = FillJournal(engine);
  // The snapshots table may still have room in its pages: use it up too, with snapshots of
  // older seqs of ever smaller sizes.
  std::uint64_t seq = 1;
  const std::uint64_t last = engine.journal().LastSeq();
  for (std::size_t size : {4096u, 512u, 64u, 8u}) {
    while (seq < last && engine.journal().SaveSnapshot(seq, std::string(size, 's')).ok()) ++seq;
  }
  stop = true;
  runner.join();
  ASSERT_LT(seq, last) << "the snapshots table never filled up";
  ASSERT_TRUE(registered);
  ASSERT_TRUE(filled) << "the journal never filled up";
  EXPECT_FALSE(result.ok()) << "Run ignored the failed shutdown snapshot";
  EXPECT_THAT(result.message(), HasSubstr("snapshot"));
  EXPECT_THAT(result.message(), HasSubstr(journal_.string()));
}

}  // namespace
}  // namespace gfp::testing
