// `journal verify --anchor SEQ:HASH`: a chain hash recorded earlier outside the node, checked
// against the event at SEQ today. A forger who rewrites history must re-chain every later hash,
// which plain verify cannot tell from the real thing; the anchor can.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "store/journal_types.h"

namespace gfp::cli {

struct JournalAnchor {
  std::uint64_t seq = 0;
  store::Hash hash{};
};

// Parses "SEQ:HASH" (SEQ a whole number, HASH 64 hex digits, as `verify` prints `head SEQ HASH`).
Result<JournalAnchor> ParseAnchor(const std::string& text);

// The result of comparing an anchor with the hash found at its seq (none: the seq is gone).
// Empty when they match, otherwise the reason, naming the seq and both hashes.
std::string AnchorMismatch(const JournalAnchor& anchor, const std::optional<store::Hash>& found,
                           std::uint64_t last_seq);

}  // namespace gfp::cli
