// The human text of one journaled event, for `journal history` and the plugin's event log lines.
// Display code: it lives outside the pure state machine, which only defines the events.
#pragma once

#include <string>

#include "statemachine/events.pb.h"

namespace gfp::journal_text {

// One line, readable: "alloc-3 granted partition 1". The text is not escaped: fields may hold
// outside text (IDs, FM messages), so callers escape it before printing.
std::string SummarizeEvent(const events::Event& event);

}  // namespace gfp::journal_text
