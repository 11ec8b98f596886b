// Schema changes live in migrations/NNNN_name.sql; CMake embeds them into the library
// (embed_migrations.cmake). Migration N moves a journal from PRAGMA user_version N-1 to N.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

#include "common/status.h"

struct sqlite3;

namespace gfp::store {

// PRAGMA application_id of every journal: ASCII "GFPJ". It tells a journal apart from any other
// SQLite file before anything is written to it.
inline constexpr std::int32_t kApplicationId = 0x4746504A;

struct Migration {
  int version;            // NNNN from the file name
  std::string_view name;  // the part after NNNN_, without .sql
  std::string_view sql;   // the file's contents
};

// The migrations compiled into this binary, in order (generated source).
std::span<const Migration> EmbeddedMigrations();

// Versions must be exactly 1, 2, 3, ... in order; a gap or disorder is reported by file name.
Status ValidateMigrationSequence(std::span<const Migration> migrations);

// Applies every migration newer than the database's user_version, each in its own
// BEGIN IMMEDIATE transaction that also sets user_version and application_id, so a crash
// leaves the journal at a whole version. `current_version` is the user_version read at open.
Status ApplyMigrations(sqlite3* db, std::span<const Migration> migrations, int current_version,
                       const std::filesystem::path& path);

}  // namespace gfp::store
