// The floor a journal commit is measured against: one durable single-row SQLite commit with the
// journal's pragmas (WAL, synchronous=FULL), in the directory (on the disk) of the journals.
#pragma once

#include <filesystem>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace gfp::bench {

class BaselineDb {
 public:
  // Creates the database at `path` (dies when it cannot).
  explicit BaselineDb(const std::filesystem::path& path);
  ~BaselineDb();
  BaselineDb(const BaselineDb&) = delete;
  BaselineDb& operator=(const BaselineDb&) = delete;

  // One commit: its latency and the CPU time this thread spent in it.
  struct Commit {
    double wall_us = 0;
    double cpu_us = 0;
  };
  Commit One();
  // `samples` timed commits after 3 untimed ones.
  void Measure(int samples, std::vector<double>& wall, std::vector<double>& cpu);

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace gfp::bench
