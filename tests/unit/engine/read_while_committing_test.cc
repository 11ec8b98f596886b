// Engine::Read and CopyState never wait on the disk (issue 22): while an Execute is inside its
// durable append (held there by the append observer, standing in for a slow fsync), readers get
// the last committed state at once; after Execute returns they get the new one. Nor does the
// writer wait on a reader: a state once published never changes under the reader holding it.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>

#include "common/temp_dir.h"
#include "engine/engine.h"

namespace gfp::engine {
namespace {

using namespace std::chrono_literals;

// A gate the append observer waits at until the test opens it.
class Gate {
 public:
  void Arrive() {
    std::unique_lock lock(mu_);
    arrived_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  bool WaitForArrival(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return arrived_; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool arrived_ = false;
  bool open_ = false;
};

std::uint64_t LastSeq(const Engine& engine) {
  return engine.Read([](const sm::State& s) { return s.last_seq; });
}

// An engine on a new journal with the plugin's start journaled (`committed`: its last seq).
class EngineReadWhileCommitting : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Engine::Open(dir_.path() / "journal.db");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    engine_ = std::move(opened).value();
    sm::StartPlugin start;
    start.now = 1;
    start.version = "test";
    ASSERT_TRUE(engine_->Execute(start).ok());
    committed = LastSeq(*engine_);
    ASSERT_GT(committed, 0u);
  }

  Engine& engine() { return *engine_; }
  std::uint64_t committed = 0;

 private:
  gfp::testing::TempDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineReadWhileCommitting, ReadersGetTheCommittedStateWhileAnAppendIsOnTheDisk) {
  Engine& engine = this->engine();

  Gate gate;
  engine.SetAppendObserver([&](double) { gate.Arrive(); });
  auto execute = std::async(std::launch::async, [&] {
    return engine.Execute(sm::ObserveKubeletRestart{2, "test"});
  });
  ASSERT_TRUE(gate.WaitForArrival(10s)) << "the Execute never reached its append";

  // Each read from another thread, with a deadline: waiting on the writer would miss it.
  auto read = std::async(std::launch::async, [&] {
    return engine.Read([](const sm::State& s) { return s.last_seq; });
  });
  auto copy = std::async(std::launch::async, [&] { return engine.CopyState().last_seq; });
  const bool read_in_time = read.wait_for(2s) == std::future_status::ready;
  const bool copy_in_time = copy.wait_for(2s) == std::future_status::ready;
  gate.Open();  // always, so that a failing run still ends
  ASSERT_TRUE(execute.get().ok());
  EXPECT_TRUE(read_in_time) << "Read waited for an Execute's append to finish";
  EXPECT_TRUE(copy_in_time) << "CopyState waited for an Execute's append to finish";
  EXPECT_EQ(read.get(), committed) << "a reader saw events before they were durable";
  EXPECT_EQ(copy.get(), committed);
  EXPECT_GT(LastSeq(engine), committed);
  engine.SetAppendObserver(nullptr);
}

TEST_F(EngineReadWhileCommitting, AnExecutePublishesWhileAReaderIsStillReading) {
  Engine& engine = this->engine();

  // A reader that stays inside Read until the test opens its gate, and then reads again.
  Gate inside;
  auto reader = std::async(std::launch::async, [&] {
    return engine.Read([&](const sm::State& s) {
      inside.Arrive();
      return s.last_seq;
    });
  });
  ASSERT_TRUE(inside.WaitForArrival(10s)) << "the reader never got into Read";
  auto execute = std::async(std::launch::async, [&] {
    return engine.Execute(sm::ObserveKubeletRestart{2, "test"});
  });
  const bool executed_in_time = execute.wait_for(5s) == std::future_status::ready;
  inside.Open();  // always, so that a failing run still ends
  EXPECT_TRUE(executed_in_time) << "Execute waited for a reader to leave Read";
  ASSERT_TRUE(execute.get().ok());
  EXPECT_EQ(reader.get(), committed) << "the state changed under a reader holding it";
  EXPECT_GT(LastSeq(engine), committed);
}

}  // namespace
}  // namespace gfp::engine
