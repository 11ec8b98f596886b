// Plain value types of the journal API. The store never interprets `type` or `payload`: the
// state machine encodes events (protobuf bytes) and the store keeps them with a time and a hash.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace gfp::store {

// SHA-256 digest; see docs/journal-format.md for what each hash covers.
using Hash = std::array<std::uint8_t, 32>;

struct NewEvent {
  std::int64_t time_unix_micros = 0;
  std::string type;     // non-empty event type name, e.g. "AllocationGranted"
  std::string payload;  // opaque bytes
  // Opaque, non-empty tags naming what the event is about ("p:3"), indexed for
  // Journal::ForEachMatching. Derived data: not covered by the hash chain.
  std::vector<std::string> subjects{};
};

struct StoredEvent {
  std::uint64_t seq = 0;
  std::int64_t time_unix_micros = 0;
  std::string type;
  std::string payload;
  Hash hash{};  // chain hash as stored
};

// State as opaque bytes, covering events 1..seq.
struct Snapshot {
  std::uint64_t seq = 0;
  std::string payload;
};

struct VerifyReport {
  bool ok = true;
  std::uint64_t events_checked = 0;
  std::uint64_t snapshots_checked = 0;
  std::uint64_t first_bad_seq = 0;  // 0 when ok (or when the failure is not tied to a seq)
  std::string reason;               // empty when ok
};

// What Journal::ForEachMatching selects.
struct EventFilter {
  std::int64_t since_time_us = std::numeric_limits<std::int64_t>::min();  // time_us >= this
  std::string subject;  // "" = any; else only events tagged with it
};

enum class OpenMode { kReadWrite, kReadOnly };

// How much an append's commit survives once Journal::Append returns.
enum class Durability {
  // synchronous=FULL: the -wal is fsynced before Append returns; a power cut keeps it.
  kSurvivesPowerLoss,
  // synchronous=NORMAL for this one transaction: written to the -wal (the OS holds it, so a
  // SIGKILL keeps it) but not fsynced; a power cut may lose it, and SQLite then rolls the -wal
  // back to an earlier commit, never to a torn one. The next kSurvivesPowerLoss append or
  // checkpoint makes it durable too (an fsync of the -wal covers every frame before it). For
  // events that record an effect no more durable than that (files written without fsync).
  kSurvivesProcessCrash,
};

}  // namespace gfp::store
