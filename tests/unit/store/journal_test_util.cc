#include "journal_test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace gfp::store::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gfp-store-test-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << tmpl << ") failed: " << std::strerror(errno);
  }
  path_ = tmpl;
}

TempDir::~TempDir() {
  const char* keep = std::getenv("GFP_KEEP_TEST_DIRS");
  if (keep != nullptr && std::string(keep) == "1") return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

RawDb::RawDb(const std::filesystem::path& path, bool create) {
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    last_error_ = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    ADD_FAILURE() << "raw sqlite3_open_v2(" << path << ") failed: " << last_error_;
    sqlite3_close(db_);
    db_ = nullptr;
  }
  if (db_ != nullptr) sqlite3_busy_timeout(db_, 5000);
}

RawDb::~RawDb() { sqlite3_close(db_); }

int RawDb::Exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  last_error_ = err != nullptr ? err : "";
  sqlite3_free(err);
  return rc;
}

std::int64_t RawDb::QueryInt(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  std::int64_t value = -1;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    value = sqlite3_column_int64(stmt, 0);
  } else {
    ADD_FAILURE() << "raw query `" << sql << "` failed: " << sqlite3_errmsg(db_);
  }
  sqlite3_finalize(stmt);
  return value;
}

std::string RawDb::QueryText(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  std::string value;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const void* data = sqlite3_column_blob(stmt, 0);
    value.assign(static_cast<const char*>(data),
                 data == nullptr ? 0 : static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0)));
  } else {
    ADD_FAILURE() << "raw query `" << sql << "` failed: " << sqlite3_errmsg(db_);
  }
  sqlite3_finalize(stmt);
  return value;
}

std::string RawDb::ReadBytes(const std::string& table, const std::string& column,
                             std::int64_t seq) {
  return QueryText("SELECT " + column + " FROM " + table + " WHERE seq = " + std::to_string(seq));
}

int RawDb::Write(const std::string& table, const std::string& column, std::int64_t seq,
                 int (*bind)(sqlite3_stmt*, const void*), const void* arg) {
  const std::string sql = "UPDATE " + table + " SET " + column + " = ?1 WHERE seq = ?2";
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    bind(stmt, arg);
    sqlite3_bind_int64(stmt, 2, seq);
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) rc = sqlite3_changes(db_) == 1 ? SQLITE_OK : SQLITE_NOTFOUND;
  }
  last_error_ = sqlite3_errmsg(db_);
  sqlite3_finalize(stmt);
  return rc;
}

int RawDb::WriteBlob(const std::string& table, const std::string& column, std::int64_t seq,
                     const std::string& bytes) {
  return Write(
      table, column, seq,
      [](sqlite3_stmt* s, const void* a) {
        const auto* b = static_cast<const std::string*>(a);
        return sqlite3_bind_blob(s, 1, b->data(), static_cast<int>(b->size()), SQLITE_TRANSIENT);
      },
      &bytes);
}

int RawDb::WriteText(const std::string& table, const std::string& column, std::int64_t seq,
                     const std::string& bytes) {
  return Write(
      table, column, seq,
      [](sqlite3_stmt* s, const void* a) {
        const auto* b = static_cast<const std::string*>(a);
        return sqlite3_bind_text(s, 1, b->data(), static_cast<int>(b->size()), SQLITE_TRANSIENT);
      },
      &bytes);
}

int RawDb::WriteInt(const std::string& table, const std::string& column, std::int64_t seq,
                    std::int64_t value) {
  return Write(
      table, column, seq,
      [](sqlite3_stmt* s, const void* a) {
        return sqlite3_bind_int64(s, 1, *static_cast<const std::int64_t*>(a));
      },
      &value);
}

NewEvent MakeEvent(std::uint64_t i) {
  NewEvent ev;
  // Alternate signs so the two's complement encoding of time is exercised.
  const auto base =
      static_cast<std::int64_t>(1'700'000'000'000'000LL + static_cast<std::int64_t>(i));
  ev.time_unix_micros = (i % 7 == 3) ? -base : base;
  ev.type = (i % 2 == 0) ? "AllocationGranted" : "PartitionActivated";
  ev.payload = "payload-" + std::to_string(i);
  ev.payload.push_back('\0');  // binary: embedded NUL and high bytes
  ev.payload.push_back(static_cast<char>(0xff - (i % 256)));
  return ev;
}

std::vector<NewEvent> MakeEvents(std::uint64_t first_index, std::uint64_t count) {
  std::vector<NewEvent> out;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) out.push_back(MakeEvent(first_index + i));
  return out;
}

std::unique_ptr<Journal> OpenOrDie(const std::filesystem::path& path, OpenMode mode) {
  auto journal = Journal::Open(path, mode);
  EXPECT_TRUE(journal.ok()) << "Journal::Open(" << path
                            << ") failed: " << journal.status().message();
  if (!journal.ok()) return nullptr;
  return std::move(journal).value();
}

std::vector<StoredEvent> ReadAll(const Journal& journal) {
  std::vector<StoredEvent> out;
  const Status s = journal.ForEach(1, 0, [&](const StoredEvent& ev) {
    out.push_back(ev);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << "ForEach over " << journal.path() << " failed: " << s.message();
  return out;
}

std::string Describe(const VerifyReport& r) {
  return std::string("VerifyReport{ok=") + (r.ok ? "true" : "false") +
         ", events_checked=" + std::to_string(r.events_checked) +
         ", snapshots_checked=" + std::to_string(r.snapshots_checked) +
         ", first_bad_seq=" + std::to_string(r.first_bad_seq) + ", reason=\"" + r.reason + "\"}";
}

std::string Describe(const Status& s) {
  return std::string(ErrorCodeName(s.code())) + ": " + s.message();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

}  // namespace gfp::store::testing
