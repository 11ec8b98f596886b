// The journaled state machine on a real SQLite journal: journal first, recovery, snapshots,
// failures that leave everything consistent.
#include "engine/engine.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "common/sm_fixtures.h"
#include "common/temp_dir.h"
#include "statemachine/event_codec.h"
#include "statemachine/invariants.h"

namespace gfp::engine {
namespace {

using gfp::testing::H100Node;
using gfp::testing::Modules;

// Runs the fixture's boot + allocations through a real engine.
class EngineTest : public ::testing::Test {
 protected:
  std::filesystem::path path() const { return dir.path() / "journal.db"; }

  std::unique_ptr<Engine> Open(EngineOptions options = {}) {
    auto engine = Engine::Open(path(), options);
    EXPECT_TRUE(engine.ok()) << engine.status().message();
    return engine.ok() ? std::move(engine).value() : nullptr;
  }

  // Executes a command and all its effects with FM always succeeding.
  static void RunToCompletion(Engine& engine, const sm::Command& command, sm::Micros& now) {
    auto d = engine.Execute(command);
    ASSERT_TRUE(d.ok()) << d.status().message();
    std::vector<sm::Effect> effects = d->effects;
    for (std::size_t i = 0; i < effects.size(); ++i) {
      sm::RecordFabricManagerOutcome o;
      o.now = ++now;
      o.kind = effects[i].kind == sm::Effect::Kind::kActivatePartition
                   ? sm::IntentKind::kActivate
                   : sm::IntentKind::kDeactivate;
      o.partition_id = effects[i].partition_id;
      auto next = engine.Execute(o);
      ASSERT_TRUE(next.ok()) << next.status().message();
      effects.insert(effects.end(), next->effects.begin(), next->effects.end());
    }
  }

  void Boot(Engine& engine) {
    gfp::testing::Driver scratch;  // only to build the boot commands
    auto node = H100Node();
    sm::StartPlugin start;
    start.now = ++now;
    start.fabric_manager_enabled = true;
    ASSERT_TRUE(engine.Execute(start).ok());
    ASSERT_TRUE(engine.Execute(gfp::testing::InventoryOf(node, ++now)).ok());
    ASSERT_TRUE(engine.Execute(gfp::testing::MappingOf(node, ++now)).ok());
    sm::ObserveFabricManagerConnection c;
    c.now = ++now;
    c.connected = true;
    c.address = "/fm.sock";
    ASSERT_TRUE(engine.Execute(c).ok());
    sm::ObserveFabricState f;
    f.now = ++now;
    f.partitions = gfp::testing::PartitionsOf(node);
    ASSERT_TRUE(engine.Execute(f).ok());
  }

  sm::RequestAllocation Request(std::vector<int> modules) {
    auto node = H100Node();
    sm::RequestAllocation r;
    r.now = ++now;
    r.resource = node.resource;
    r.device_ids = Modules(node, std::move(modules));
    return r;
  }

  gfp::testing::TempDir dir;
  sm::Micros now = 1'700'000'000'000'000;
};

TEST_F(EngineTest, ReopenRebuildsTheSameState) {
  sm::State before;
  {
    auto engine = Open();
    Boot(*engine);
    RunToCompletion(*engine, Request({1, 3}), now);
    RunToCompletion(*engine, Request({5, 6, 7, 8}), now);
    before = engine->CopyState();
    ASSERT_EQ(before.active.size(), 2u);
  }
  auto engine = Open();
  EXPECT_EQ(engine->CopyState(), before);
  EXPECT_EQ(engine->recovery().snapshot_seq, 0u);
  EXPECT_EQ(engine->recovery().events_replayed, before.last_seq);
}

TEST_F(EngineTest, IntentIsDurableBeforeTheEffectIsReturned) {
  auto engine = Open();
  Boot(*engine);
  auto d = engine->Execute(Request({2, 4}));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->effects.size(), 1u);
  // A reader opened now (another process would see the same) already sees the intent.
  auto reader = store::Journal::Open(path(), store::OpenMode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto state = Replay(**reader, 0, false, true);
  ASSERT_TRUE(state.ok()) << state.status().message();
  ASSERT_TRUE(state->intents.count(4));
  EXPECT_EQ(state->intents.at(4).kind, sm::IntentKind::kActivate);
}

TEST_F(EngineTest, SnapshotsBoundRecoveryAndMatchFullReplay) {
  sm::State before;
  {
    auto engine = Open(EngineOptions{.snapshot_every = 10, .snapshots_kept = 2});
    Boot(*engine);
    for (int round = 0; round < 20; ++round) {
      RunToCompletion(*engine, Request({round % 2 ? 1 : 2, round % 2 ? 3 : 4}), now);
    }
    before = engine->CopyState();
  }
  auto engine = Open();
  EXPECT_EQ(engine->CopyState(), before);
  EXPECT_GT(engine->recovery().snapshot_seq, 0u);
  EXPECT_LT(engine->recovery().events_replayed, 10u + 10u);
  auto reader = store::Journal::Open(path(), store::OpenMode::kReadOnly);
  ASSERT_TRUE(reader.ok());
  auto full = Replay(**reader, 0, /*use_snapshots=*/false, /*check_invariants=*/true);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(*full, before);
}

TEST_F(EngineTest, FailedAppendLeavesStateAndJournalUnchanged) {
  auto engine = Open();
  Boot(*engine);
  // A full disk: the database may not grow (free space in its pages still takes a few appends).
  ASSERT_TRUE(engine->journal().SetMaxPageCountForTesting(1).ok());
  bool failed = false;
  for (int i = 0; i < 2000 && !failed; ++i) {
    const sm::State before = engine->CopyState();
    auto d = engine->Execute(gfp::testing::InventoryOf(H100Node(), ++now));  // no-op decisions
    sm::ObserveKubeletRestart restart{++now, std::string(512, 'x')};
    auto r = engine->Execute(restart);
    if (!r.ok()) {
      failed = true;
      EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted) << r.status().message();
      EXPECT_EQ(engine->CopyState(), before);
      EXPECT_EQ(engine->journal().LastSeq(), before.last_seq);
    }
  }
  ASSERT_TRUE(failed) << "the journal never filled up";
  ASSERT_TRUE(engine->journal().SetMaxPageCountForTesting(1'073'741'823).ok());
  auto ok = engine->Execute(sm::ObserveKubeletRestart{++now, "after the disk was freed"});
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(engine->CopyState().last_seq, engine->journal().LastSeq());
}

TEST_F(EngineTest, DecisionsWithoutEventsTouchNothing) {
  auto engine = Open();
  Boot(*engine);
  const auto seq = engine->journal().LastSeq();
  auto again = engine->Execute(gfp::testing::InventoryOf(H100Node(), ++now));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->events.empty());
  EXPECT_EQ(engine->journal().LastSeq(), seq);
}

TEST_F(EngineTest, ReplayStopsAtAnUndecodableEventNamingItsSeq) {
  {
    auto engine = Open();
    Boot(*engine);
  }
  // Corrupt seq 2's payload (and leave the hash alone: Replay does not check hashes, verify does).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE events SET payload = x'ffffffff' WHERE seq = 2", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto reader = store::Journal::Open(path(), store::OpenMode::kReadOnly);
  ASSERT_TRUE(reader.ok());
  auto state = Replay(**reader, 0, false, false);
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find("journal seq 2"), std::string::npos)
      << state.status().message();
}

}  // namespace
}  // namespace gfp::engine
