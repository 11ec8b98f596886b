// Names and meanings of Fabric Manager return codes (reference/fabric-manager.md §2.1), so every
// message and journal entry can carry "FM_ST_IN_USE" next to the number. The table itself is the
// one the state machine uses too (fm_codes/fm_codes.h); these are the adapter's names for it.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace gfp::adapters::fm {

// "FM_ST_IN_USE" for -7; "FM_ST_UNKNOWN(-42)" for codes outside 0..-29.
std::string FmReturnName(int code);

// A short, generic explanation ("resource in use"); empty for unknown codes.
std::string_view FmReturnDescription(int code);

// The gfp::ErrorCode category a caller should treat an FM code as (e.g. NOT_CONFIGURED and
// CONNECTION_NOT_VALID are Unavailable: retry later).
ErrorCode FmReturnCategory(int code);

}  // namespace gfp::adapters::fm
