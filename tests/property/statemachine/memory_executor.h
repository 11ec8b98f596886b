// The plugin with an in-memory journal for scenario.h's runner: Decide, then the Driver's journal
// and Apply (sm_fixtures.h). A restart rebuilds the state from the journal's encoded events (what
// a real journal stores), so it also checks the event codec; replay from SQLite is the engine
// suite's (tests/property/engine).
#pragma once

#include <string>
#include <utility>

#include "scenario.h"
#include "statemachine/event_codec.h"

namespace gfp::testing {

class MemoryExecutor : public Executor {
 public:
  MemoryExecutor() { driver.report_to_gtest = false; }

  Result<sm::Decision> Execute(const sm::Command& command) override {
    sm::Decision decision = sm::Decide(driver.state, command);
    driver.Commit(decision.events);
    if (!driver.broken.empty()) return Internal("invariant broken: " + driver.broken);
    return decision;
  }
  const sm::State& state() const override { return driver.state; }
  Status Restart() override {
    sm::State rebuilt;
    for (std::size_t i = 0; i < driver.journal.size(); ++i) {
      const events::Event& e = driver.journal[i];
      auto decoded =
          sm::DecodeEvent(sm::EventTypeName(e), e.time_unix_micros(), sm::EncodeEvent(e));
      if (!decoded.ok()) return decoded.status().WithContext("event " + std::to_string(i + 1));
      sm::Apply(rebuilt, i + 1, *decoded);
    }
    if (!(rebuilt == driver.state)) {
      return Internal("replay of the encoded journal " + StateDiff(driver.state, rebuilt));
    }
    driver.state = std::move(rebuilt);
    return Status::Ok();
  }

  Driver driver;
};

}  // namespace gfp::testing
