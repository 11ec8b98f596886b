#include "sim/world/in_memory_fm.h"

#include <algorithm>

#include "adapters/fm/fm_abi.h"
#include "sim/fm/sim_tables.h"

namespace gfp::simworld {

namespace abi = gfp::adapters::fm::abi;

Result<std::unique_ptr<InMemoryFm>> InMemoryFm::Create(std::string_view table) {
  GFP_RETURN_IF_ERROR(fmsim::FindTable(table).status());
  fmsim::SimState initial;
  initial.table = std::string(table);
  auto store = std::make_shared<fmsim::MemoryStateStore>(std::move(initial));
  return std::unique_ptr<InMemoryFm>(new InMemoryFm(std::move(store)));
}

InMemoryFm::InMemoryFm(std::shared_ptr<fmsim::MemoryStateStore> store)
    : store_(store), control_(fmsim::FmSimControl::Over(std::move(store))) {}

FmCallOutcome InMemoryFm::Serve(const FmCall& call, int caller) {
  fmsim::SimState& state = store_->state();
  // A one-shot delay longer than any deadline: the reply does not come in time.
  if (auto it = state.delays.find(call.function); it != state.delays.end()) {
    fmsim::ConsumeOne(state.delays, it);
    const std::uint64_t id = next_late_id_++;
    late_.push_back(LateCall{id, call, caller});
    return FmCallOutcome{abi::kTimeout, id};
  }
  return FmCallOutcome{CarryOut(call, caller, /*may_crash=*/true), std::nullopt};
}

int InMemoryFm::CarryOut(const FmCall& call, int caller, bool may_crash) {
  fmsim::SimState& state = store_->state();
  auto table = fmsim::FindTable(state.table);
  if (!table.ok())
    return abi::kGenericError;  // Create checked it; the control API cannot change it
  fmsim::FabricCall c{call.function, state, **table, {}};
  if (may_crash && fmsim::TakeCrash(c, fmsim::CrashPoint::kBefore, 0)) {
    throw ProcessDied{call.function, fmsim::CrashPoint::kBefore};
  }
  // A handle made before FM dropped its connections, or while FM is away, is stale.
  const bool stale =
      call.handle_generation && (*call.handle_generation != state.generation || state.unreachable);
  const int done = stale ? abi::kConnectionNotValid : call.body(c);
  const int code = fmsim::LoseReplyIfArmed(c, done);
  const bool crash_after = may_crash && fmsim::TakeCrash(c, fmsim::CrashPoint::kAfter, 0);
  if (crash_after) c.note += (c.note.empty() ? "" : "; ") + std::string("caller crashed");
  store_->AppendCall(
      fmsim::CallRecord{call.function, call.args, done, 0, caller, call.vfs, std::move(c.note)});
  if (crash_after) throw ProcessDied{call.function, fmsim::CrashPoint::kAfter};
  return code;
}

bool InMemoryFm::IsLate(std::uint64_t id) const {
  return std::any_of(late_.begin(), late_.end(), [&](const LateCall& l) { return l.id == id; });
}

void InMemoryFm::CompleteLateCalls() {
  while (!late_.empty()) {
    LateCall late = std::move(late_.front());
    late_.pop_front();
    CarryOut(late.call, late.caller, /*may_crash=*/false);
  }
}

}  // namespace gfp::simworld
