// Fuzz target: a journaled event payload. Decodes it as the journal reader does (DecodeEvent, with
// the type and time columns either taken from the payload itself or deliberately wrong), then
// feeds what decodes to everything that consumes events: the summaries of `journal history`,
// the JSON fields, Apply on an empty state and the invariant check.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_support.h"
#include "journal_text/event_summary.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/invariants.h"
#include "statemachine/state.h"

namespace {

void Consume(const gfp::events::Event& event) {
  (void)gfp::journal_text::SummarizeEvent(event);
  (void)gfp::sm::EventFieldsJson(event);
  (void)gfp::sm::FormatRfc3339(event.time_unix_micros());
  gfp::sm::State state;
  gfp::sm::Apply(state, 1, event);
  gfp::sm::Apply(state, 2, event);  // the same event twice: out of place the second time
  (void)gfp::sm::CheckInvariants(state);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  gfp::events::Event probe;
  if (!probe.ParseFromString(payload)) {
    (void)gfp::sm::DecodeEvent("AllocationGranted", 0, payload);
    (void)gfp::sm::ParseRfc3339(payload);
    return 0;
  }
  const std::string type = gfp::sm::EventTypeName(probe);
  auto decoded = gfp::sm::DecodeEvent(type, probe.time_unix_micros(), payload);
  if (decoded.ok()) Consume(*decoded);
  // Columns that disagree with the payload must be reported, never trusted.
  (void)gfp::sm::DecodeEvent(type + "x", probe.time_unix_micros(), payload);
  (void)gfp::sm::DecodeEvent(type, probe.time_unix_micros() ^ 1, payload);
  return 0;
}
