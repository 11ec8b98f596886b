// Engine::SetAppendObserver (metrics, SPEC §8.1 gpu_fabric_journal_append_seconds): called once
// per durable append, with its duration; not for a decision without events.
#include <gtest/gtest.h>

#include <vector>

#include "common/temp_dir.h"
#include "engine/engine.h"

namespace gfp::engine {
namespace {

TEST(EngineAppendObserverTest, SeesEveryDurableAppendAndNothingElse) {
  gfp::testing::TempDir dir;
  auto engine = Engine::Open(dir.path() / "journal.db");
  ASSERT_TRUE(engine.ok()) << engine.status().message();
  std::vector<double> appends;
  (*engine)->SetAppendObserver([&](double seconds) { appends.push_back(seconds); });

  sm::StartPlugin start;
  start.now = 1;
  start.version = "test";
  auto started = (*engine)->Execute(start);
  ASSERT_TRUE(started.ok());
  ASSERT_FALSE(started->events.empty());
  ASSERT_EQ(appends.size(), 1u);
  EXPECT_GT(appends[0], 0.0);
  EXPECT_LT(appends[0], 60.0);

  // A kubelet restart is journaled every time; a refused request without devices too. Count
  // exactly the Executes that appended.
  std::size_t appended = 1;
  for (int i = 0; i < 3; ++i) {
    auto d = (*engine)->Execute(sm::ObserveKubeletRestart{2 + i, "test"});
    ASSERT_TRUE(d.ok());
    appended += d->events.empty() ? 0 : 1;
  }
  EXPECT_EQ(appends.size(), appended);

  (*engine)->SetAppendObserver(nullptr);
  ASSERT_TRUE((*engine)->Execute(sm::ObserveKubeletRestart{10, "test"}).ok());
  EXPECT_EQ(appends.size(), appended);
}

}  // namespace
}  // namespace gfp::engine
