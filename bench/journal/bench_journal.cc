// Journal benchmark. Prints one table, then the SPEC §7 figure it measures (batched append
// throughput; --json PATH writes it too); timing never makes it fail (the machines are noisy, so
// latencies are reported next to a baseline measured in the same run on the same disk).
//
//   bench_journal [--quick] [--json PATH] [--dir DIR] [--events N] [--samples N] [--batch N]
//                 [--payload-bytes N] [--keep]
//
// 1. durable single-event Append latency vs a raw single-row SQLite INSERT commit (same pragmas)
// 2. batched Append throughput (target >= 100,000 events/s)
// 3. Open time of the resulting N-event journal (read-write and read-only)
// 4. ForEach replay throughput over all N events (target >= 1,000,000 events/s)
// 5. Verify throughput (full chain re-hash), for reference
#include <sqlite3.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "store/journal.h"

namespace {

using gfp::bench::Die;
using gfp::bench::Fmt;
using gfp::bench::Header;
using gfp::bench::Percentile;
using gfp::bench::Row;

using Clock = std::chrono::steady_clock;
using gfp::store::Journal;
using gfp::store::NewEvent;
using gfp::store::OpenMode;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

std::unique_ptr<Journal> OpenJournal(const std::filesystem::path& p, OpenMode mode) {
  auto j = Journal::Open(p, mode);
  if (!j.ok()) Die(j.status().message());
  return std::move(j).value();
}

NewEvent Event(std::uint64_t i, std::size_t payload_bytes) {
  NewEvent ev;
  ev.time_unix_micros = 1'700'000'000'000'000LL + static_cast<std::int64_t>(i);
  ev.type = "AllocationGranted";
  ev.payload.assign(payload_bytes, static_cast<char>('a' + i % 26));
  return ev;
}

// One durable single-row INSERT per sample, with the journal's pragmas: the fsync floor.
std::vector<double> BaselineInsertLatencies(const std::filesystem::path& p, int samples,
                                            std::size_t payload_bytes) {
  sqlite3* db = nullptr;
  if (sqlite3_open(p.c_str(), &db) != SQLITE_OK) Die("cannot open baseline " + p.string());
  const char* setup =
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);";
  if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db));
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t(v) VALUES(?1)", -1, &stmt, nullptr);
  const std::string payload(payload_bytes, 'p');
  std::vector<double> out;
  for (int i = -10; i < samples; ++i) {  // 10 warm-up rounds
    const auto start = Clock::now();
    sqlite3_bind_blob(stmt, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
    if (sqlite3_step(stmt) != SQLITE_DONE) Die(sqlite3_errmsg(db));
    sqlite3_reset(stmt);
    if (i >= 0) out.push_back(Micros(Clock::now() - start));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

std::vector<double> JournalAppendLatencies(const std::filesystem::path& p, int samples,
                                           std::size_t payload_bytes) {
  auto journal = OpenJournal(p, OpenMode::kReadWrite);
  std::vector<double> out;
  for (int i = -10; i < samples; ++i) {
    const NewEvent ev = Event(static_cast<std::uint64_t>(i + 10), payload_bytes);
    const auto start = Clock::now();
    auto r = journal->Append({&ev, 1});
    if (!r.ok()) Die(r.status().message());
    if (i >= 0) out.push_back(Micros(Clock::now() - start));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin journal benchmark"};
  std::string dir_flag;
  std::string json_path;
  std::uint64_t events = 1'000'000;
  int samples = 300;
  std::uint64_t batch = 1000;
  std::size_t payload_bytes = 64;
  bool keep = false;
  bool quick = false;
  app.add_option("--dir", dir_flag, "directory on the disk to measure (default: a temp dir)");
  app.add_option("--json", json_path, "also write the figures to this file as JSON");
  app.add_option("--events", events, "events in the large journal")->check(CLI::PositiveNumber);
  app.add_option("--samples", samples, "single-append latency samples")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "events per batched append")->check(CLI::PositiveNumber);
  app.add_option("--payload-bytes", payload_bytes, "payload size of each event");
  app.add_flag("--keep", keep, "keep the benchmark files");
  app.add_flag("--quick", quick, "tiny run: 20,000 events, 50 samples");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    events = std::min<std::uint64_t>(events, 20'000);
    samples = std::min(samples, 50);
  }

  const std::filesystem::path base =
      dir_flag.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(dir_flag);
  std::string tmpl = (base / "bench-journal-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) Die("cannot create a directory under " + base.string());
  const std::filesystem::path work = tmpl;

  std::printf("journal benchmark in %s (payload %zu bytes, SQLite %s)\n\n", work.c_str(),
              payload_bytes, sqlite3_libversion());
  std::printf("| %-44s | %18s | %-34s |\n", "metric", "value", "note");
  std::printf("|%s|%s|%s|\n", std::string(46, '-').c_str(), std::string(20, '-').c_str(),
              std::string(36, '-').c_str());

  // 1. Durable single-event latency against the fsync floor.
  const auto base_lat = BaselineInsertLatencies(work / "baseline.db", samples, payload_bytes);
  const auto app_lat = JournalAppendLatencies(work / "latency.db", samples, payload_bytes);
  const double base_med = Percentile(base_lat, 0.5);
  const double app_med = Percentile(app_lat, 0.5);
  Row("raw SQLite 1-row INSERT commit, median", Fmt("%.1f us", base_med),
      "baseline (WAL, synchronous=FULL)");
  Row("raw SQLite 1-row INSERT commit, p99", Fmt("%.1f us", Percentile(base_lat, 0.99)), "");
  Row("Journal::Append(1 event), median", Fmt("%.1f us", app_med),
      Fmt("ratio to baseline %.2fx", app_med / base_med));
  Row("Journal::Append(1 event), p99", Fmt("%.1f us", Percentile(app_lat, 0.99)),
      Fmt("ratio to baseline p99 %.2fx", Percentile(app_lat, 0.99) / Percentile(base_lat, 0.99)));

  // 2. Batched append throughput, building the large journal.
  const auto big = work / "big.db";
  {
    auto journal = OpenJournal(big, OpenMode::kReadWrite);
    std::vector<NewEvent> chunk;
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < events; i += batch) {
      chunk.clear();
      for (std::uint64_t k = i; k < std::min(events, i + batch); ++k) {
        chunk.push_back(Event(k, payload_bytes));
      }
      auto r = journal->Append(chunk);
      if (!r.ok()) Die(r.status().message());
    }
    const double secs = Seconds(Clock::now() - start);
    const double rate = static_cast<double>(events) / secs;
    Row("batched Append (" + std::to_string(batch) + "/batch), events/s", Fmt("%.0f", rate),
        "target >= 100,000");
    gfp::bench::Figures().Add(
        gfp::bench::Spec7Figure("append_batched_events_per_s", rate,
                                std::to_string(batch) + "/batch, " + std::to_string(payload_bytes) +
                                    "-byte payloads, " + std::to_string(events) + " events"));
    if (!journal->SaveSnapshot(journal->LastSeq(), std::string(4096, 's')).ok()) Die("snapshot");
  }  // closing checkpoints the WAL into the main file

  // 3. Open time of the large journal (includes migrations check and tail re-hash).
  std::vector<double> open_rw;
  std::vector<double> open_ro;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    {
      auto j = OpenJournal(big, OpenMode::kReadWrite);
      open_rw.push_back(Micros(Clock::now() - start));
    }
    start = Clock::now();
    {
      auto j = OpenJournal(big, OpenMode::kReadOnly);
      open_ro.push_back(Micros(Clock::now() - start));
    }
  }
  Row("Open(kReadWrite) of " + std::to_string(events) + "-event journal",
      Fmt("%.2f ms", Percentile(open_rw, 0.5) / 1000), "median of 5");
  Row("Open(kReadOnly) of " + std::to_string(events) + "-event journal",
      Fmt("%.2f ms", Percentile(open_ro, 0.5) / 1000), "median of 5");

  // 4. Replay scan throughput (page cache warm after the writes: the restart case).
  auto reader = OpenJournal(big, OpenMode::kReadOnly);
  std::vector<double> rates;
  std::uint64_t checksum = 0;
  for (int i = 0; i < 3; ++i) {
    std::uint64_t seen = 0;
    const auto start = Clock::now();
    const gfp::Status s = reader->ForEach(1, 0, [&](const gfp::store::StoredEvent& ev) {
      ++seen;
      checksum += ev.payload.size() + ev.hash[0];
      return gfp::Status::Ok();
    });
    if (!s.ok()) Die(s.message());
    rates.push_back(static_cast<double>(seen) / Seconds(Clock::now() - start));
  }
  Row("ForEach replay, events/s", Fmt("%.0f", Percentile(rates, 0.5)),
      "median of 3; target >= 1,000,000");

  // 5. Full verification (SHA-256 of every event) for reference.
  auto latest = reader->LatestValidSnapshot(0, nullptr);
  if (!latest.ok() || !latest->has_value()) Die("snapshot missing");
  const auto vstart = Clock::now();
  const auto report = reader->Verify({});
  const double vsecs = Seconds(Clock::now() - vstart);
  if (!report.ok) Die("verify failed: " + report.reason);
  Row("Verify (full chain), events/s",
      Fmt("%.0f", static_cast<double>(report.events_checked) / vsecs),
      "reference; not on the start-up path");
  std::printf("\n(checksum %llu)\n", static_cast<unsigned long long>(checksum));
  gfp::bench::Figures().Print();
  if (!json_path.empty()) gfp::bench::Figures().WriteJson(json_path, quick);

  reader.reset();
  if (!keep) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }
  return 0;
}
