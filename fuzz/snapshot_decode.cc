// Fuzz target: a journaled snapshot payload. DecodeSnapshot must return a state or an error; a
// state it returns must survive the invariant check and encode to bytes that decode back to the
// same state (the engine restores from snapshots it wrote itself, so the codec must round-trip).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz/fuzz_support.h"
#include "statemachine/invariants.h"
#include "statemachine/snapshot_codec.h"
#include "statemachine/state.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto decoded = gfp::sm::DecodeSnapshot(bytes);
  if (!decoded.ok()) return 0;
  (void)gfp::sm::CheckInvariants(*decoded);
  const std::string encoded = gfp::sm::EncodeSnapshot(*decoded);
  auto again = gfp::sm::DecodeSnapshot(encoded);
  if (!again.ok() || !(*again == *decoded)) std::abort();  // the round trip lost something
  return 0;
}
