#include "bench/common/baseline_db.h"

#include <sqlite3.h>

#include <chrono>
#include <string>

#include "bench/bench_report.h"
#include "bench/common/process_clock.h"

namespace gfp::bench {

BaselineDb::BaselineDb(const std::filesystem::path& path) {
  if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) Die("cannot open baseline " + path.string());
  const char* setup =
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);";
  if (sqlite3_exec(db_, setup, nullptr, nullptr, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db_));
  if (sqlite3_prepare_v2(db_, "INSERT INTO t(v) VALUES(?1)", -1, &stmt_, nullptr) != SQLITE_OK) {
    Die(sqlite3_errmsg(db_));
  }
}

BaselineDb::~BaselineDb() {
  sqlite3_finalize(stmt_);
  sqlite3_close(db_);
}

BaselineDb::Commit BaselineDb::One() {
  const std::string payload(96, 'p');
  const double cpu0 = ThreadCpuMicros();
  const auto start = std::chrono::steady_clock::now();
  sqlite3_bind_blob(stmt_, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
  if (sqlite3_step(stmt_) != SQLITE_DONE) Die(sqlite3_errmsg(db_));
  sqlite3_reset(stmt_);
  const std::chrono::duration<double, std::micro> wall = std::chrono::steady_clock::now() - start;
  return {wall.count(), ThreadCpuMicros() - cpu0};
}

void BaselineDb::Measure(int samples, std::vector<double>& wall, std::vector<double>& cpu) {
  for (int i = -3; i < samples; ++i) {
    const Commit c = One();
    if (i < 0) continue;
    wall.push_back(c.wall_us);
    cpu.push_back(c.cpu_us);
  }
}

}  // namespace gfp::bench
