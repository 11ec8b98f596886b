// History benchmark (SPEC §7 "growth with history"): journal bytes per allocation-and-release,
// and the wall time of the real binary's `journal history --partition N --since T` and
// `journal state --at SEQ` (each <= 1 s on a 10,000,000-event journal), T and SEQ early, in
// the middle and late. Output of the commands goes to /dev/null.
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "bench/common/grow_journal.h"
#include "common/sm_fixtures.h"
#include "engine/engine.h"
#include "process/child_process.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "store/journal.h"

namespace fs = std::filesystem;
using gfp::bench::Die;
using gfp::bench::Figures;
using gfp::bench::Fmt;
using gfp::bench::Row;
using gfp::bench::Spec7Figure;

namespace {

// Boots an HGX H100 node (start, inventory, module mapping, FM connected, partition table) into
// a new journal, encoded as Engine::Execute encodes events.
void BootJournal(const fs::path& path) {
  gfp::testing::Driver driver;
  driver.Boot(gfp::testing::H100Node());
  std::vector<gfp::store::NewEvent> records;
  for (const auto& e : driver.journal) {
    records.push_back({e.time_unix_micros(), gfp::sm::EventTypeName(e), gfp::sm::EncodeEvent(e),
                       gfp::sm::EventSubjects(e)});
  }
  auto journal = gfp::store::Journal::Open(path, gfp::store::OpenMode::kReadWrite);
  if (!journal.ok()) Die(journal.status().message());
  if (auto r = (*journal)->Append(records); !r.ok()) Die(r.status().message());
}

long long SizeOf(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

// The time of event `seq`, as RFC 3339.
std::string TimeAt(const fs::path& path, std::uint64_t seq) {
  auto journal = gfp::store::Journal::Open(path, gfp::store::OpenMode::kReadOnly);
  if (!journal.ok()) Die(journal.status().message());
  std::int64_t time = 0;
  auto s = (*journal)->ForEach(seq, seq, [&](const gfp::store::StoredEvent& ev) {
    time = ev.time_unix_micros;
    return gfp::Status::Ok();
  });
  if (!s.ok()) Die(s.message());
  return gfp::sm::FormatRfc3339(time);
}

// Runs the binary with `args`, stdout to /dev/null, and returns its wall time in ms.
double TimeCommand(const std::string& binary, const std::vector<std::string>& args) {
  gfp::process::ProcessOptions o;
  o.binary = binary;
  o.args = args;
  o.stdout_path = "/dev/null";
  o.log_path = fs::temp_directory_path() / ("bench_history." + std::to_string(::getpid()) + ".log");
  fs::remove(o.log_path);
  const auto started = std::chrono::steady_clock::now();
  auto child = gfp::process::ChildProcess::Start(o);
  if (!child.ok()) Die(child.status().message());
  const gfp::process::ExitStatus status = (*child)->Wait();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  const std::string errors = (*child)->Log();
  fs::remove(o.log_path);
  if (!status.success()) {
    Die("command failed (" + status.ToString() + "): " + (*child)->CommandLine() + "\n" + errors);
  }
  return ms;
}

std::string Verdict(double ms) {
  return std::string("<= 1000 ms: ") + (ms <= 1000 ? "met" : "MISSED");
}

// Appends `events` in batches of 1000 to a new journal at `path`; events per second.
double AppendRate(const fs::path& path, const std::vector<gfp::store::NewEvent>& events) {
  auto journal = gfp::store::Journal::Open(path, gfp::store::OpenMode::kReadWrite);
  if (!journal.ok()) Die(journal.status().message());
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < events.size(); i += 1000) {
    const std::size_t n = std::min<std::size_t>(1000, events.size() - i);
    if (auto r = (*journal)->Append({events.data() + i, n}); !r.ok()) Die(r.status().message());
  }
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return static_cast<double>(events.size()) / s;
}

// The store's own cost of the index: the grown journal's first events appended again in
// batches of 1000, with their tags and without (SPEC floor >= 100,000 events/s batched).
void BenchAppend(const fs::path& journal, const fs::path& work) {
  auto source = gfp::store::Journal::Open(journal, gfp::store::OpenMode::kReadOnly);
  if (!source.ok()) Die(source.status().message());
  std::vector<gfp::store::NewEvent> tagged;
  auto s = (*source)->ForEach(1, 200'000, [&](const gfp::store::StoredEvent& ev) {
    auto e = gfp::sm::DecodeEvent(ev.type, ev.time_unix_micros, ev.payload);
    if (!e.ok()) return e.status();
    tagged.push_back({ev.time_unix_micros, ev.type, ev.payload, gfp::sm::EventSubjects(*e)});
    return gfp::Status::Ok();
  });
  if (!s.ok()) Die(s.message());
  std::vector<gfp::store::NewEvent> untagged = tagged;
  for (auto& e : untagged) e.subjects.clear();
  const double without = AppendRate(work / "append-untagged.db", untagged);
  const double with = AppendRate(work / "append-tagged.db", tagged);
  Row("batched Append (1000/batch), events without tags", Fmt("%.0f events/s", without),
      ">= 100,000; the time index only");
  Row("batched Append (1000/batch), events with their tags", Fmt("%.0f events/s", with),
      Fmt(">= 100,000: ", 0) + (with >= 100'000 ? "met" : "MISSED") +
          Fmt("; %.2fx the untagged time", without / with));
}

// Makes `journal` what migration 2 leaves of a schema-1 journal: no index rows, and
// subjects_from_seq after the last event (the time index stays: migration 2 builds it).
void StripIndex(const fs::path& journal) {
  sqlite3* db = nullptr;
  const char* sql =
      "BEGIN IMMEDIATE; DELETE FROM event_subjects; DELETE FROM subjects; "
      "UPDATE journal_meta SET value = (SELECT max(seq) + 1 FROM events) "
      "WHERE key = 'subjects_from_seq'; COMMIT; PRAGMA wal_checkpoint(TRUNCATE);";
  char* error = nullptr;
  const bool ok = sqlite3_open(journal.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql, nullptr, nullptr, &error) == SQLITE_OK;
  const std::string why = error ? error : (db ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_free(error);
  sqlite3_close(db);
  if (!ok) Die("stripping the index of " + journal.string() + ": " + why);
}

struct Options {
  std::uint64_t events = 10'000'000;
  std::string dir;
  std::string journal;  // an existing journal to query instead of growing one
  std::string binary = GFP_BENCH_HISTORY_BINARY;
  std::uint32_t partition = 3;
  bool keep = false;
  bool migrate = false;
  bool schema1 = false;  // strip the grown journal's index, then time indexing it
  bool quick = false;
  std::string json;  // where to write the SPEC §7 figures
};

// A schema-1 journal after the upgrade: filtered history before and after serve's first start
// indexes its events, and how long that indexing takes (once per journal).
void IndexAsAfterUpgrade(const Options& o, const fs::path& journal, std::uint64_t last_seq) {
  StripIndex(journal);
  const std::string since = TimeAt(journal, std::max<std::uint64_t>(1, last_seq / 20));
  const double scan_ms =
      TimeCommand(o.binary, {"journal", "history", "--journal", journal.string(), "--partition",
                             std::to_string(o.partition), "--since", since});
  Row("schema-1 journal, not indexed: history --since T, T early", Fmt("%.0f ms", scan_ms),
      "decodes every event since T");
  auto writer = gfp::store::Journal::Open(journal, gfp::store::OpenMode::kReadWrite);
  if (!writer.ok()) Die(writer.status().message());
  const auto started = std::chrono::steady_clock::now();
  auto indexed = gfp::engine::IndexSchema1Events(**writer);
  if (!indexed.ok()) Die(indexed.status().message());
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  Row("schema-1 journal: indexing at serve's first start", Fmt("%.1f s", s),
      Fmt("once; %.0f events/s", static_cast<double>(*indexed) / s));
  Figures().Add(Spec7Figure("schema1_index_seconds", s,
                            Fmt("%.0f events indexed once, at the first start after the upgrade",
                                static_cast<double>(*indexed))));
}

// Drops `file`'s pages from the page cache (written back first: dirty pages stay), so the next
// query reads the journal from the disk, as an audit of a journal nothing read lately does.
void EvictFromPageCache(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("cannot open " + file.string() + " to drop it from the page cache");
  const bool ok = ::fdatasync(fd) == 0 && ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  if (!ok) Die("cannot drop " + file.string() + " from the page cache");
}

// The slowest of a set of timed rows, and which one it was.
struct Worst {
  double ms = 0;
  std::string what;
  void Note(double row_ms, const std::string& row) {
    if (row_ms < ms) return;
    ms = row_ms;
    what = row;
  }
};

// Times both audit queries at an early, a middle and a late point; the SPEC §7 figure of each is
// its slowest point. History is timed twice at each point: with the journal dropped from the page
// cache first (cold: the usual audit), then at once again (warm).
void TimeQueries(const Options& o, const fs::path& journal, std::uint64_t last_seq) {
  const std::pair<const char*, double> points[] = {
      {"early", 0.05}, {"middle", 0.5}, {"late", 0.95}};
  Worst history_cold;
  Worst history_warm;
  Worst state;
  const std::string events = Fmt(", %.0f events", static_cast<double>(last_seq));
  for (const auto& [name, fraction] : points) {
    const auto seq = static_cast<std::uint64_t>(static_cast<double>(last_seq) * fraction);
    const std::string since = TimeAt(journal, seq);
    const std::vector<std::string> args = {"journal",     "history",
                                           "--journal",   journal.string(),
                                           "--partition", std::to_string(o.partition),
                                           "--since",     since};
    const std::string row =
        Fmt("journal history --partition %.0f --since T, T ", o.partition) + name;
    EvictFromPageCache(journal);
    const double cold_ms = TimeCommand(o.binary, args);
    Row(row + ", cold", Fmt("%.0f ms", cold_ms), Verdict(cold_ms) + "; T " + since);
    history_cold.Note(cold_ms, std::string("T ") + name + ", cold" + events);
    const double warm_ms = TimeCommand(o.binary, args);
    Row(row + ", warm", Fmt("%.0f ms", warm_ms), Verdict(warm_ms) + "; run again at once");
    history_warm.Note(warm_ms, std::string("T ") + name + ", warm" + events);
  }
  for (const auto& [name, fraction] : points) {
    // Not on a snapshot's seq: the replay after the nearest snapshot is part of the answer.
    const auto seq = static_cast<std::uint64_t>(static_cast<double>(last_seq) * fraction) + 7'777;
    const std::uint64_t at = std::min(seq, last_seq);
    const double ms = TimeCommand(
        o.binary, {"journal", "state", "--journal", journal.string(), "--at", std::to_string(at)});
    Row(Fmt("journal state --at SEQ, SEQ %.0f (", static_cast<double>(at)) + name + ")",
        Fmt("%.0f ms", ms), Verdict(ms));
    state.Note(ms, std::string("SEQ ") + name + events);
  }
  const Worst& history = history_cold.ms >= history_warm.ms ? history_cold : history_warm;
  Figures().Add(Spec7Figure("history_query_10m_s", history.ms / 1000, "worst: " + history.what));
  Figures().Add(Spec7Figure("history_query_10m_cold_s", history_cold.ms / 1000,
                            "worst: " + history_cold.what));
  Figures().Add(Spec7Figure("history_query_10m_warm_s", history_warm.ms / 1000,
                            "worst: " + history_warm.what));
  Figures().Add(Spec7Figure("state_at_10m_s", state.ms / 1000, "worst: " + state.what));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin history benchmark (journal growth, history and state queries)"};
  Options o;
  app.add_option("--events", o.events, "events in the journal to grow")->check(CLI::PositiveNumber);
  app.add_option("--dir", o.dir, "directory on the disk to measure (default: a temp dir)");
  auto* existing =
      app.add_option("--journal", o.journal, "query this existing journal instead of growing one");
  app.add_option("--binary", o.binary, "the gpu-fabric-plugin binary to time");
  app.add_option("--partition", o.partition, "the partition to ask history about");
  app.add_flag("--keep", o.keep, "keep the grown journal");
  app.add_flag("--migrate", o.migrate, "with --journal: open it read-write first (migrates it)");
  auto* schema1 = app.add_flag(
      "--schema-1", o.schema1,
      "make the grown journal one migrated from schema 1 (no index rows before its end), then "
      "time serve's indexing of it; the queries then run on the result");
  app.add_flag("--quick", o.quick, "tiny run (smoke test): a 20,000-event journal");
  app.add_option("--json", o.json, "also write the SPEC §7 figures to this file as JSON");
  schema1->excludes(existing);  // it rewrites the journal: only one the benchmark grew itself
  CLI11_PARSE(app, argc, argv);
  if (o.quick) o.events = std::min<std::uint64_t>(o.events, 20'000);

  fs::path work;
  fs::path journal = o.journal;
  gfp::bench::GrowResult grown;
  if (journal.empty()) {
    const fs::path base = o.dir.empty() ? fs::temp_directory_path() : fs::path(o.dir);
    std::string tmpl = (base / "bench-history-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) Die("cannot create a directory under " + base.string());
    work = tmpl;
    journal = work / "journal.db";
    std::printf("history benchmark: %s, %llu events\n\n", journal.c_str(),
                static_cast<unsigned long long>(o.events));
    const auto started = std::chrono::steady_clock::now();
    BootJournal(journal);
    grown = gfp::bench::GrowJournal(journal, o.events);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    gfp::bench::Header();
    Row("journal growth (boot + cycles, batched appends)",
        Fmt("%.0f events/s", static_cast<double>(grown.last_seq) / s),
        Fmt("%.1f s; not a target", s));
    const double bytes = static_cast<double>(SizeOf(journal) + SizeOf(journal.string() + "-wal"));
    Row("journal bytes per allocation-and-release",
        Fmt("%.0f B", bytes / static_cast<double>(grown.cycles)),
        Fmt("file + -wal after checkpoint: %.0f MB", bytes / 1e6));
    Figures().Add(Spec7Figure("journal_bytes_per_alloc_release",
                              bytes / static_cast<double>(grown.cycles),
                              Fmt("%.0f cycles", static_cast<double>(grown.cycles))));
  } else {
    std::printf("history benchmark: existing journal %s\n\n", journal.c_str());
    gfp::bench::Header();
    if (o.migrate) {
      // A writer's open migrates an older schema (schema 2 builds the time index).
      const auto started = std::chrono::steady_clock::now();
      auto writer = gfp::store::Journal::Open(journal, gfp::store::OpenMode::kReadWrite);
      if (!writer.ok()) Die(writer.status().message());
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      Row("Open(kReadWrite): migrate and check the chain tail", Fmt("%.0f ms", ms),
          "once, at the first serve of a new version");
    }
    auto j = gfp::store::Journal::Open(journal, gfp::store::OpenMode::kReadOnly);
    if (!j.ok()) Die(j.status().message());
    grown.last_seq = (*j)->LastSeq();
  }
  Row("journal events", Fmt("%.0f", static_cast<double>(grown.last_seq)), "");
  if (!work.empty()) BenchAppend(journal, work);
  if (o.schema1) IndexAsAfterUpgrade(o, journal, grown.last_seq);
  TimeQueries(o, journal, grown.last_seq);
  Figures().Print();
  if (!o.json.empty()) Figures().WriteJson(o.json, o.quick);
  if (!work.empty() && !o.keep) {
    std::error_code ec;
    fs::remove_all(work, ec);
  } else if (!work.empty()) {
    std::printf("  (kept: %s)\n", journal.c_str());
  }
  return 0;
}
