// Properties of the journaled engine over random node lives (../statemachine/scenario.h), each
// comparing two independently built things:
//  - after every Execute that journals something, the engine's live state (which is Decide's
//    scratch state, adopted) against a state built only from the SQLite file: a second,
//    read-only connection reads the new records (chain checked), decodes them with DecodeEvent
//    and applies them to a state that started empty. Each life asserts that it compared once per
//    transaction (and at least once);
//  - the live state the Engine built while executing decisions (applying each decision's events
//    in memory) against engine::Replay of the real SQLite journal, from seq 1 and from the newest
//    snapshot plus the tail, at the end and at transaction boundaries (snapshots are written
//    every few events, so the snapshot codec is on the path);
//  - every plugin restart in the scenario reopens the journal (Engine::Open) and compares the
//    reopened state with the live one before start-up recovery continues;
//  - a crash image: the journal files copied between two transactions open (Engine::Open of the
//    copy) to the live state recorded at that boundary.
// The runner's own check of Decide's scratch state compares nothing here: the engine returns
// decisions without it (it adopted it), so the file is the judge.
//
// A failure prints the shrunk scenario and the seed; rerun it with
//   RC_PARAMS="seed=<n>" build/tests/property/engine/engine_property_tests
//     --gtest_filter=EngineProperty.<name>
// (or the RC_PARAMS="reproduce=..." line rapidcheck prints, which skips straight to the minimum).
// Journals live under /dev/shm when it exists (set KEEP_TEST_DIRS=1 to keep them).
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "engine/engine.h"
#include "scenario.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"

namespace gfp::engine {
namespace {

namespace fs = std::filesystem;
using gfp::testing::AnyNode;
using gfp::testing::NodeFixture;
using gfp::testing::ScenarioRunner;
using gfp::testing::StateDiff;
using sm::State;

// A scratch directory on tmpfs when there is one: SQLite's syncs cost nothing there.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = fs::is_directory("/dev/shm") ? "/dev/shm" : std::getenv("TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/gfp-prop-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty() && !std::getenv("KEEP_TEST_DIRS")) fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The plugin on a real journal. Records the live state at every transaction boundary and copies
// the journal files after transaction number `copy_at` (a crash image).
class EngineExecutor : public gfp::testing::Executor {
 public:
  EngineExecutor(fs::path dir, EngineOptions options, std::size_t copy_at)
      : dir_(std::move(dir)), options_(options), copy_at_(copy_at) {}

  Status Open() {
    GFP_ASSIGN_OR_RETURN(engine_, Engine::Open(dir_ / "journal.db", options_));
    live_ = engine_->CopyState();
    GFP_ASSIGN_OR_RETURN(reader_, store::Journal::Open(path(), store::OpenMode::kReadOnly));
    return Status::Ok();
  }

  Result<sm::Decision> Execute(const sm::Command& command) override {
    GFP_ASSIGN_OR_RETURN(sm::Decision decision, engine_->Execute(command));
    if (decision.events.empty()) return decision;
    live_ = engine_->CopyState();
    GFP_RETURN_IF_ERROR(CompareWithTheFile(decision.events));
    at_seq_[live_.last_seq] = live_;
    if (++transactions_ == copy_at_) GFP_RETURN_IF_ERROR(CopyJournal());
    return decision;
  }

  const State& state() const override { return live_; }

  Status Restart() override {
    engine_.reset();
    GFP_ASSIGN_OR_RETURN(engine_, Engine::Open(dir_ / "journal.db", options_));
    const State reopened = engine_->CopyState();
    if (!(reopened == live_))
      return Internal("Engine::Open after a restart: " + StateDiff(live_, reopened));
    return Status::Ok();
  }

  Engine& engine() { return *engine_; }
  std::size_t transactions() const { return transactions_; }
  std::size_t compared_with_the_file() const { return compared_; }
  void Close() { engine_.reset(); }
  const std::map<std::uint64_t, State>& at_seq() const { return at_seq_; }
  std::uint64_t copied_seq() const { return copied_seq_; }
  fs::path copy_path() const { return dir_ / "crash" / "journal.db"; }
  fs::path path() const { return dir_ / "journal.db"; }

  // Brings the state built from the file up to its last record, through the read-only
  // connection and without the engine's code, then compares it with the live state.
  Status CompareWithTheFile(const std::vector<events::Event>& journaled) {
    const auto apply = [this](const store::StoredEvent& stored) -> Status {
      GFP_ASSIGN_OR_RETURN(events::Event event,
                           sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload));
      sm::Apply(from_file_, stored.seq, event);
      return Status::Ok();
    };
    GFP_RETURN_IF_ERROR(reader_->ForEachVerified(from_file_.last_seq + 1, 0, apply)
                            .WithContext("reading the journal through a read-only connection"));
    ++compared_;
    if (from_file_ == live_) return Status::Ok();
    std::string types;
    for (const auto& e : journaled) types += (types.empty() ? "" : " ") + sm::EventTypeName(e);
    return Internal("after Execute journaled " + types + ", the engine's live state differs from " +
                    "the replay of its SQLite file: " + StateDiff(from_file_, live_));
  }

  // Between two transactions nothing is half-written: the database and its WAL, copied now, are
  // what a power cut here would leave.
  Status CopyJournal() {
    std::error_code error;
    fs::create_directories(dir_ / "crash", error);
    for (const char* suffix : {"", "-wal"}) {
      const fs::path from = dir_ / (std::string("journal.db") + suffix);
      if (!fs::exists(from)) continue;
      fs::copy_file(from, dir_ / "crash" / from.filename(), error);
      if (error) return Internal("copying " + from.string() + ": " + error.message());
    }
    copied_seq_ = live_.last_seq;
    return Status::Ok();
  }

 private:
  fs::path dir_;
  EngineOptions options_;
  std::size_t copy_at_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<store::Journal> reader_;  // the second, read-only connection
  State live_;
  State from_file_;  // built only from what reader_ reads
  std::size_t compared_ = 0;
  std::map<std::uint64_t, State> at_seq_;
  std::size_t transactions_ = 0;
  std::uint64_t copied_seq_ = 0;
};

// Replays the journal up to `seq` and fails the property unless it equals `expected`.
void ExpectReplay(Engine& engine, std::uint64_t seq, bool use_snapshots, const State& expected) {
  RecoveryReport report;
  auto replayed = Replay(engine.journal(), seq, use_snapshots, /*check_invariants=*/true, &report);
  const std::string how =
      std::string(use_snapshots
                      ? "snapshot at seq " + std::to_string(report.snapshot_seq) + " + tail"
                      : "from seq 1") +
      (seq == 0 ? " to the end" : " up to seq " + std::to_string(seq));
  if (!replayed.ok()) RC_FAIL("replay " + how + " failed: " + replayed.status().message());
  if (!(*replayed == expected)) RC_FAIL("replay " + how + " " + StateDiff(expected, *replayed));
}

// Runs a random life on a real journal; returns the executor for the checks.
struct Life {
  ScratchDir dir;
  std::unique_ptr<EngineExecutor> executor;
  gfp::testing::ScenarioStats stats;
};

void Live(Life& life) {
  const NodeFixture node = AnyNode(*rc::gen::inRange(0, 3));
  const bool fm = *rc::gen::weightedElement<bool>({{4, true}, {1, false}});
  const auto steps = *gfp::testing::GenScenario(node, fm);
  EngineOptions options;
  options.snapshot_every = *rc::gen::inRange<std::uint64_t>(1, 40);
  options.snapshots_kept = *rc::gen::weightedElement<std::uint64_t>({{3, 1000}, {1, 2}});
  const auto copy_at = *rc::gen::inRange<std::size_t>(1, steps.size() + 4);
  RC_LOG() << "snapshot_every=" << options.snapshot_every
           << " snapshots_kept=" << options.snapshots_kept << " crash image after transaction "
           << copy_at << std::endl;
  RC_ASSERT(!life.dir.path().empty());
  life.executor = std::make_unique<EngineExecutor>(life.dir.path(), options, copy_at);
  const Status opened = life.executor->Open();
  if (!opened.ok()) RC_FAIL("opening a new journal: " + opened.message());
  ScenarioRunner runner(*life.executor, node, fm);
  const Status ran = runner.Run(steps);
  if (!ran.ok()) RC_FAIL(ran.message());
  life.stats = runner.stats();
  // The boot alone journals: a life that compared nothing, or skipped a transaction, judged
  // nothing there.
  RC_ASSERT(life.executor->compared_with_the_file() > 0u);
  RC_ASSERT(life.executor->compared_with_the_file() == life.executor->transactions());
}

RC_GTEST_PROP(EngineProperty, ReplayOfTheSqliteJournalEqualsTheLiveState, ()) {
  Life life;
  Live(life);
  RC_TAG(gfp::testing::RestartKind(life.stats));
  EngineExecutor& executor = *life.executor;
  const State& live = executor.state();
  ExpectReplay(executor.engine(), 0, /*use_snapshots=*/false, live);
  ExpectReplay(executor.engine(), 0, /*use_snapshots=*/true, live);
  // Every boundary from the newest snapshot at or below it; a few from seq 1.
  const auto& at_seq = executor.at_seq();
  for (const auto& [seq, state] : at_seq) ExpectReplay(executor.engine(), seq, true, state);
  const auto picks =
      *rc::gen::container<std::vector<std::size_t>>(3, rc::gen::arbitrary<std::size_t>());
  for (std::size_t pick : picks) {
    auto it = at_seq.begin();
    std::advance(it, pick % at_seq.size());
    ExpectReplay(executor.engine(), it->first, false, it->second);
  }
  executor.Close();
  auto reopened = Engine::Open(executor.path());
  if (!reopened.ok()) RC_FAIL("reopening: " + reopened.status().message());
  const State state = (*reopened)->CopyState();
  if (!(state == live)) RC_FAIL("Engine::Open at the end " + StateDiff(live, state));
}

RC_GTEST_PROP(EngineProperty, ACrashImageOpensToTheLiveStateAtItsBoundary, ()) {
  Life life;
  Live(life);
  EngineExecutor& executor = *life.executor;
  RC_TAG(gfp::testing::NodeChangeKind(life.stats));
  RC_CLASSIFY(executor.copied_seq() == 0, "scenario ended before the crash point");
  if (executor.copied_seq() == 0) {
    const Status copied = executor.CopyJournal();
    if (!copied.ok()) RC_FAIL(copied.message());
  }
  auto opened = Engine::Open(executor.copy_path());
  if (!opened.ok()) RC_FAIL("Engine::Open of the crash image: " + opened.status().message());
  const State recovered = (*opened)->CopyState();
  const State& expected = executor.at_seq().at(executor.copied_seq());
  if (!(recovered == expected)) {
    RC_FAIL("crash image after seq " + std::to_string(executor.copied_seq()) + " " +
            StateDiff(expected, recovered));
  }
}

}  // namespace
}  // namespace gfp::engine
