#include "cli/journal_anchor.h"

#include <charconv>

#include "common/text_escape.h"
#include "store/hash_chain.h"

namespace gfp::cli {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseHash(const std::string& hex, store::Hash* out) {
  if (hex.size() != 2 * out->size()) return false;
  for (std::size_t i = 0; i < out->size(); ++i) {
    const int high = HexDigit(hex[2 * i]);
    const int low = HexDigit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    (*out)[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

}  // namespace

Result<JournalAnchor> ParseAnchor(const std::string& text) {
  const auto invalid = [&text] {
    return InvalidArgument(
        "must be SEQ:HASH (a seq and its 64-hex-digit chain hash, as `verify` "
        "prints them in `head SEQ HASH`), not \"" +
        EscapeAndTruncate(text, 100) + "\"");
  };
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return invalid();
  JournalAnchor anchor;
  const char* seq_end = text.data() + colon;
  auto [end, error] = std::from_chars(text.data(), seq_end, anchor.seq);
  if (error != std::errc() || end != seq_end) return invalid();
  if (!ParseHash(text.substr(colon + 1), &anchor.hash)) return invalid();
  // Seq 0 is the chain's start, whose hash is all zeros in every journal: it vouches for nothing.
  if (anchor.seq == 0) {
    return InvalidArgument(
        "names seq 0, the start of every chain, which vouches for nothing: "
        "record the head `verify` prints once the journal has events, not \"" +
        EscapeAndTruncate(text, 100) + "\"");
  }
  return anchor;
}

std::string AnchorMismatch(const JournalAnchor& anchor, const std::optional<store::Hash>& found,
                           std::uint64_t last_seq) {
  const std::string seq = std::to_string(anchor.seq);
  if (!found) {
    return "event seq " + seq + " no longer exists (the journal ends at seq " +
           std::to_string(last_seq) + "; the anchor recorded hash " +
           store::HashToHex(anchor.hash) + "): the history was truncated or rewritten";
  }
  if (*found == anchor.hash) return {};
  return "event seq " + seq + " has chain hash " + store::HashToHex(*found) +
         " but the anchor recorded " + store::HashToHex(anchor.hash) + ": the history up to seq " +
         seq + " was rewritten";
}

}  // namespace gfp::cli
