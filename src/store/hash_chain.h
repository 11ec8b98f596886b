// The SHA-256 hashes that make the journal tamper-evident (formulas in docs/journal-format.md):
//   event:    SHA-256(prev_hash[32] || seq u64be || time_us i64be || len(type) u32be || type ||
//   payload) snapshot: SHA-256(seq u64be || event_hash_at_seq[32] || created_time_us i64be ||
//   payload)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/journal_types.h"

namespace gfp::store {

// Hash of seq 0, the "previous hash" of the first event.
inline constexpr Hash kZeroHash{};

// Computes chain hashes with one reusable OpenSSL context (allocating one per event would
// dominate append and verify time). Not thread-safe: one per Journal, used under its lock.
class ChainHasher {
 public:
  static Result<ChainHasher> Create();

  ChainHasher(ChainHasher&&) noexcept;
  ChainHasher& operator=(ChainHasher&&) noexcept;
  ~ChainHasher();

  Result<Hash> EventHash(const Hash& prev_hash, std::uint64_t seq, std::int64_t time_unix_micros,
                         std::string_view type, std::string_view payload);
  Result<Hash> SnapshotHash(std::uint64_t seq, const Hash& event_hash,
                            std::int64_t created_time_unix_micros, std::string_view payload);

 private:
  struct State;
  explicit ChainHasher(std::unique_ptr<State> state);
  Result<Hash> Digest(std::string_view header, std::string_view part1, std::string_view part2);
  std::unique_ptr<State> state_;
};

// Lowercase hex, for messages.
std::string HashToHex(const Hash& hash);
// Short form for messages: the first 8 bytes as hex.
std::string ShortHex(const Hash& hash);

}  // namespace gfp::store
