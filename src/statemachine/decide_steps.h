// The steps decisions are made of, shared by decide.cc (kubelet allocations, Fabric Manager) and
// decide_claims.cc (DRA claims): the decision builder, refusals, and the partition saga's steps.
// Internal to the state machine; callers use decide.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "statemachine/apply.h"
#include "statemachine/decide.h"

namespace gfp::sm {

// What the journal keeps of a request's outside text: a refusal is journaled for the audit trail,
// and one absurd kubelet call must not add megabytes to it or forge lines where it is printed.
constexpr std::size_t kMaxReasonBytes = 1024;
constexpr std::size_t kMaxRefusedIdsKept = 8;
constexpr std::size_t kMaxRefusedIdBytes = 80;

// Why a request cannot go on, and what kind of reason it is; empty text when it can.
struct Refusal {
  RefusalKind kind = RefusalKind::kNone;
  std::string text;
};

inline Refusal InvalidRequest(std::string text) {
  return {RefusalKind::kInvalidRequest, std::move(text)};
}
inline Refusal NotServable(std::string text) {
  return {RefusalKind::kNotServable, std::move(text)};
}

Refusal FmRefusal(const events::FmResult& fm, std::string text);
// A refusal that carries Fabric Manager's answer; recovery's "not applied" is no answer.
RefusalKind FmRefusalKind(const events::FmResult& fm);
// Fabric Manager answered the call with `code` (a recovered result is no answer).
bool FmAnswered(const events::FmResult& fm, int code);
std::string FmText(const events::FmResult& fm);
// Why a request did not complete, for its refusal (empty cause: the plugin stopped).
std::string InterruptedText(const std::string& cause);

// Accumulates a decision. Every event is applied to a scratch copy of the state as it is added,
// so later steps of the same decision see the effect of earlier ones. The copy is made at the
// first event: a decision that journals nothing (most observations, e.g. a health re-check that
// finds no change) reads the given state and copies nothing. Decide code therefore re-reads
// state() after an Emit rather than keep a reference from before it.
class Builder {
 public:
  Builder(const State& state, Micros now) : given_(state), now_(now) {}

  const State& state() const { return scratch_ ? *scratch_ : given_; }

  template <typename Body, typename Setter>
  void Emit(Setter setter, const Body& body) {
    events::Event event;
    event.set_time_unix_micros(now_);
    *(event.*setter)() = body;
    if (!scratch_) scratch_.emplace(given_);
    Apply(*scratch_, scratch_->last_seq + 1, event);
    decision_.events.push_back(std::move(event));
  }

  void Effect(const sm::Effect& effect) { decision_.effects.push_back(effect); }
  void Refuse(Refusal why, int fm_return = 0) {
    decision_.refusal = std::move(why.text);
    decision_.refusal_kind = why.kind;
    decision_.refusal_fm_code = why.kind == RefusalKind::kFabricManagerRefused ? fm_return : 0;
  }
  void SetAllocation(const AllocationId& id) { decision_.allocation_id = id; }
  Decision Take() {
    decision_.state_after = std::move(scratch_);
    return std::move(decision_);
  }

 private:
  const State& given_;
  std::optional<State> scratch_;
  Micros now_;
  Decision decision_;
};

#define GFP_EMIT(builder, field, body) (builder).Emit(&events::Event::mutable_##field, body)

// Ends allocation `id` (still requested, or a claim's granted allocation) as refused: journals
// AllocationRejected, or ClaimPrepareFailed for a claim. `reason` may carry outside text (IDs,
// FM strings): it is escaped and cut, in the journal and in the refusal alike. `journal_note` is
// added to the journaled reason only.
void RejectAllocation(Builder& b, const AllocationId& id, RefusalKind kind,
                      const std::string& reason, const events::FmResult* fm = nullptr,
                      const std::string& journal_note = "");
void Grant(Builder& b, const AllocationId& id, std::optional<PartitionId> partition);
void RequestDeactivation(Builder& b, PartitionId pid, const std::string& reason,
                         const AllocationId& for_allocation);
// `vfs`: the VF list for fmActivateFabricPartitionWithVFs (vGPU VFs), empty for whole GPUs.
void RequestActivation(Builder& b, PartitionId pid, const AllocationId& for_allocation,
                       const std::string& reason, const std::vector<Bdf>& vfs);
std::string PendingText(const PendingIntent& intent, PartitionId pid);
// The VF list to activate `pid` with for `a` (empty for whole GPUs).
std::vector<Bdf> VfListFor(const State& s, const Allocation& a, PartitionId pid);
// Why `a`'s journaled VF list cannot re-activate `pid`; empty when it can.
std::string VfOrderProblem(const State& s, const Allocation& a, PartitionId pid);
// The next step of a Fabric-Manager allocation still in `requested`: clear every other active
// partition overlapping its GPUs (one deactivation per step), then activate its own partition.
void ContinueAllocation(Builder& b, const AllocationId& id);
// Why `devices` cannot be allocated with Fabric Manager; empty text when they can.
Refusal FabricManagerRefusal(const State& s, const std::vector<std::string>& devices);

}  // namespace gfp::sm
