// A consistent, self-contained copy of a journal's SQLite file, for `journal copy` (docs/audit.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "common/status.h"
#include "store/journal_types.h"

namespace gfp::store {

// The bytes a file needs to be the journal on its own: no -wal or -shm beside it.
struct DatabaseImage {
  std::shared_ptr<const unsigned char> data;  // size bytes
  std::size_t size = 0;
  std::uint64_t last_seq = 0;  // the newest event in the copy (0: none)
  Hash last_hash{};            // its chain hash as stored (not re-hashed)
  std::span<const unsigned char> bytes() const { return {data.get(), size}; }
};

// The whole journal at `path` as of one read transaction, -wal included, as the bytes of a
// standalone SQLite file (marked rollback-journal mode, so it needs no -wal or -shm of its own).
// Opens its own read-only connection by Journal::Open's read-only rules (the same refusals) and
// creates nothing; safe while a writer appends, which it neither blocks nor sees. Holds the copy
// in memory. Does not check the chain: a damaged journal is copied as it is, for `journal verify`.
Result<DatabaseImage> ConsistentImage(const std::filesystem::path& path);

}  // namespace gfp::store
