// Helpers for the journal tests: real temporary directories, raw sqlite3 access for tampering
// with a journal behind the library's back, and event factories.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "store/journal.h"

namespace gfp::store::testing {

// A fresh directory under the system temp dir, removed (with contents) at destruction.
// Set GFP_KEEP_TEST_DIRS=1 to keep it for inspection after a failure.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A raw SQLite connection (no library code) for crafting and corrupting files.
class RawDb {
 public:
  explicit RawDb(const std::filesystem::path& path, bool create = false);
  ~RawDb();
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  bool ok() const { return db_ != nullptr; }
  // Runs SQL; returns the SQLite result code; errors are described in last_error().
  int Exec(const std::string& sql);
  std::int64_t QueryInt(const std::string& sql);
  std::string QueryText(const std::string& sql);
  // SELECT <column> FROM <table> WHERE seq = <seq>, as raw bytes.
  std::string ReadBytes(const std::string& table, const std::string& column, std::int64_t seq);
  // UPDATE <table> SET <column> = <value> WHERE seq = <seq>; returns the SQLite result code.
  int WriteBlob(const std::string& table, const std::string& column, std::int64_t seq,
                const std::string& bytes);
  int WriteText(const std::string& table, const std::string& column, std::int64_t seq,
                const std::string& bytes);
  int WriteInt(const std::string& table, const std::string& column, std::int64_t seq,
               std::int64_t value);
  const std::string& last_error() const { return last_error_; }

 private:
  int Write(const std::string& table, const std::string& column, std::int64_t seq,
            int (*bind)(sqlite3_stmt*, const void*), const void* arg);
  sqlite3* db_ = nullptr;
  std::string last_error_;
};

// Deterministic, varied events: binary payloads, negative and positive times.
NewEvent MakeEvent(std::uint64_t i);
std::vector<NewEvent> MakeEvents(std::uint64_t first_index, std::uint64_t count);

std::unique_ptr<Journal> OpenOrDie(const std::filesystem::path& path, OpenMode mode);
// All events via ForEach (asserts the scan succeeded).
std::vector<StoredEvent> ReadAll(const Journal& journal);
std::string Describe(const VerifyReport& report);
// A whole file's bytes ("" when unreadable), and writing bytes over a file.
std::string ReadFile(const std::filesystem::path& path);
void WriteFile(const std::filesystem::path& path, const std::string& content);
std::string Describe(const Status& status);

}  // namespace gfp::store::testing
