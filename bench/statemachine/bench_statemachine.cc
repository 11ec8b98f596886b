// State-machine and engine benchmark (SPEC §7). Prints one table, then the SPEC §7 figures it
// measured (value, target, ratio, verdict; --json PATH writes them too); timing never makes it
// fail.
//
//   bench_statemachine [--quick] [--json PATH] [--dir DIR] [--events N] [--samples N] [--keep]
//
// 1. GetPreferredAllocation in-process (PreferredByPartition) on the HGX A100 16-GPU /
//    35-partition table, sizes 1, 2, 4, 8, 16, free node and half-used node: median, p99
//    (target <= 20 us per call).
// 2. Decide throughput (allocation chains: request, stale deactivations, activation, grant,
//    bind, release) and Apply throughput over the events those chains produce.
// 3. A journal of N realistic events (default 1,000,000) built with the engine's encoding and
//    Journal::Append in batches of 1000 (events/s, for reference; bench/journal has the raw
//    store figure), then Replay from disk (target >= 2,000,000 events/s) and cold start
//    Engine::Open without snapshots, with a snapshot 9,999 events before the end (the worst case
//    of snapshot_every = 10,000) and with a snapshot at the end (target <= 200 ms).
// 4. Engine::Execute throughput (one durable transaction per decision: the engine has no batch
//    API), next to a durable single-row SQLite commit measured in the same run.
#include <sqlite3.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_report.h"
#include "common/sm_fixtures.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/decide.h"
#include "statemachine/event_codec.h"
#include "statemachine/preferred.h"
#include "statemachine/snapshot_codec.h"
#include "store/journal.h"

namespace {

using gfp::bench::Die;
using gfp::bench::Fmt;
using gfp::bench::Header;
using gfp::bench::Percentile;
using gfp::bench::Row;

using Clock = std::chrono::steady_clock;
using gfp::events::Event;
using gfp::sm::Micros;
using gfp::sm::State;
namespace sm = gfp::sm;
namespace fs = std::filesystem;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Micros_(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// ---------------------------------------------------------------------------------------------
// A driver like tests/common/sm_fixtures.h's, without the per-event invariant check, that can
// hand every committed event to a sink (the journal builder) and counts decisions.
class Sim {
 public:
  State state;
  Micros now = 1'700'000'000'000'000;
  std::uint64_t seq = 0;
  std::uint64_t decisions = 0;
  double decide_seconds = 0;  // time spent inside sm::Decide only
  std::function<void(const Event&)> sink;

  sm::Decision Run(const sm::Command& command) {
    const auto start = Clock::now();
    sm::Decision d = sm::Decide(state, command);
    decide_seconds += Seconds(Clock::now() - start);
    ++decisions;
    for (const auto& e : d.events) {
      sm::Apply(state, ++seq, e);
      if (sink) sink(e);
    }
    return d;
  }

  // Runs a command and all the effects it leads to (FM always succeeds). Returns the first
  // decision (its allocation id) and the last refusal.
  sm::Decision RunChain(const sm::Command& command) {
    sm::Decision first = Run(command);
    std::vector<sm::Effect> effects = first.effects;
    for (std::size_t i = 0; i < effects.size(); ++i) {
      const sm::Effect effect = effects[i];
      now += 1000;
      const sm::Decision d = Run(sm::OutcomeOf(effect, now, gfp::testing::FmOk()));
      if (!d.refusal.empty()) first.refusal = d.refusal;
      effects.insert(effects.end(), d.effects.begin(), d.effects.end());
    }
    return first;
  }
};

// Boots an A100 node through the fixtures' driver and hands its events to `sim`.
void BootA100(Sim& sim, const gfp::testing::NodeFixture& node) {
  gfp::testing::Driver driver;
  driver.Boot(node);
  sim.state = State{};
  sim.seq = 0;
  for (const auto& e : driver.journal) {
    sm::Apply(sim.state, ++sim.seq, e);
    if (sim.sink) sim.sink(e);
  }
  sim.now = driver.now;
}

std::vector<std::string> PartitionBdfs(const gfp::testing::NodeFixture& node, std::size_t index) {
  std::vector<std::string> out;
  for (auto m : node.partitions[index].second) out.push_back(node.bdfs_by_module[m - 1]);
  return out;
}

// The realistic workload: kubelet allocates a random partition of the table (releasing older
// allocations of its devices, deactivating stale overlapping partitions, activating, granting),
// the pod is seen (bound), and every third allocation is later released by reconciliation.
class Workload {
 public:
  Workload(Sim& sim, const gfp::testing::NodeFixture& node) : sim_(sim), node_(node) {}

  // One cycle; returns false if something unexpected was refused.
  bool Cycle() {
    rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
    // Mostly small partitions, like real VM sizes; the 16-GPU one now and then.
    const std::size_t n = node_.partitions.size();
    std::size_t index = static_cast<std::size_t>((rng_ >> 33) % n);
    if (index == 0 && ((rng_ >> 20) & 3) != 0)
      index = 1 + static_cast<std::size_t>((rng_ >> 40) % (n - 1));
    sim_.now += 1000;
    sm::RequestAllocation request;
    request.now = sim_.now;
    request.resource = node_.resource;
    request.device_ids = PartitionBdfs(node_, index);
    sm::Decision d = sim_.RunChain(request);
    if (!d.refusal.empty()) {
      if (++refusals_ < 3) std::fprintf(stderr, "refused: %s\n", d.refusal.c_str());
      return false;
    }
    ++chains_;
    // The pod shows up in PodResources.
    sim_.now += 1000;
    sm::ObservePodResources pods;
    pods.now = sim_.now;
    pods.containers.push_back(
        {"default", "vm-" + d.allocation_id, "compute", node_.resource, request.device_ids});
    sim_.Run(pods);
    // Every third allocation is released later (devices unused for the grace).
    if (chains_ % 3 == 0 && !pending_release_.empty()) {
      const std::string id = pending_release_;
      if (sim_.state.allocations.count(id)) {
        sim_.now += 1000;
        sm::ReleaseAllocation release;
        release.now = sim_.now;
        release.allocation_id = id;
        release.detail = "devices absent from every pod for the release grace";
        sim_.RunChain(release);
      }
    }
    pending_release_ = d.allocation_id;
    return true;
  }

  std::uint64_t chains() const { return chains_; }
  std::uint64_t refusals() const { return refusals_; }

 private:
  Sim& sim_;
  const gfp::testing::NodeFixture& node_;
  std::uint64_t rng_ = 0x9e3779b97f4a7c15ULL;
  std::uint64_t chains_ = 0;
  std::uint64_t refusals_ = 0;
  std::string pending_release_;
};

// ---------------------------------------------------------------------------------------------
// 1. GetPreferredAllocation

std::vector<std::string> FreeDevices(const State& s) {
  std::set<std::string> used;
  for (const auto& [id, a] : s.allocations) {
    if (a.live()) used.insert(a.devices.begin(), a.devices.end());
  }
  std::vector<std::string> out;
  for (const auto& [bdf, d] : s.devices) {
    if (d.healthy && !used.count(bdf)) out.push_back(bdf);  // kubelet's (sorted) order
  }
  return out;
}

void BenchPreferred(const gfp::testing::NodeFixture& node, int samples) {
  double worst_p99 = 0;
  std::string worst_row;
  Sim sim;
  BootA100(sim, node);
  const State free_node = sim.state;
  // Half-used: modules 1-4 (partition 7) and 9-12 (partition 9) allocated and bound.
  for (std::size_t index : {std::size_t{7}, std::size_t{9}}) {
    sm::RequestAllocation r;
    r.now = (sim.now += 1000);
    r.resource = node.resource;
    r.device_ids = PartitionBdfs(node, index);
    auto d = sim.RunChain(r);
    if (!d.refusal.empty()) Die("half-used setup refused: " + d.refusal);
  }
  const State half = sim.state;

  for (const auto& [label, state] : {std::pair<const char*, const State*>{"free", &free_node},
                                     std::pair<const char*, const State*>{"half-used", &half}}) {
    const std::vector<std::string> available = FreeDevices(*state);
    for (std::size_t size : {1, 2, 4, 8, 16}) {
      sm::PreferredRequest request{available, {}, size};
      std::vector<double> lat;
      lat.reserve(static_cast<std::size_t>(samples));
      bool ok = true;
      std::size_t sink = 0;
      for (int i = -samples / 10; i < samples; ++i) {
        const auto start = Clock::now();
        auto answer = sm::PreferredByPartition(*state, request);
        const auto end = Clock::now();
        ok = answer.ok();
        sink += ok ? answer->size() : answer.status().message().size();
        if (i >= 0) lat.push_back(Micros_(end - start));
      }
      const double med = Percentile(lat, 0.5);
      const double p99 = Percentile(lat, 0.99);
      char metric[128];
      std::snprintf(metric, sizeof metric, "Preferred in-process, %s node (%zu avail), size %zu",
                    label, available.size(), size);
      if (p99 > worst_p99) {
        worst_p99 = p99;
        worst_row = metric + std::strlen("Preferred in-process, ");
      }
      std::string note = p99 <= 20.0 ? "<= 20 us: met (p99)" : "<= 20 us: MISSED (p99)";
      if (!ok) note += "; no fit (error path)";
      Row(metric, Fmt("%.2f", med) + "/" + Fmt("%.2f us", p99), note);
      if (sink == 0) std::printf("(empty)\n");
    }
  }
  std::printf("  (value = median/p99 per call over %d calls)\n", samples);
  gfp::bench::Figures().Add(
      gfp::bench::Spec7Figure("gpa_inprocess_p99_worst", worst_p99,
                              "A100 16 GPUs / 35 partitions, 10 rows; worst: " + worst_row +
                                  Fmt(", %.0f calls/row", samples)));
}

// ---------------------------------------------------------------------------------------------
// 2. Decide / Apply throughput

void BenchDecideApply(const gfp::testing::NodeFixture& node, std::uint64_t cycles) {
  Sim sim;
  std::vector<Event> events;
  sim.sink = [&](const Event& e) { events.push_back(e); };
  BootA100(sim, node);
  const std::size_t boot_events = events.size();
  const std::uint64_t boot_decisions = sim.decisions;
  sim.decide_seconds = 0;
  Workload work(sim, node);
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < cycles; ++i) work.Cycle();
  const double secs = Seconds(Clock::now() - start);
  const double decisions = static_cast<double>(sim.decisions - boot_decisions);
  const auto produced = static_cast<double>(events.size() - boot_events);
  Row("Decide only, decisions/s", Fmt("%.0f", decisions / sim.decide_seconds),
      Fmt("%.0f decisions in the chains", decisions));
  Row("Decide+Apply (whole chains), decisions/s", Fmt("%.0f", decisions / secs),
      Fmt("%.0f allocation chains/s", static_cast<double>(work.chains()) / secs));
  Row("  events per decision / per allocation chain",
      Fmt("%.2f", produced / decisions) + " / " +
          Fmt("%.1f", produced / static_cast<double>(work.chains())),
      work.refusals() ? Fmt("%.0f refused chains", static_cast<double>(work.refusals())) : "");

  // Apply alone, from an empty state, over the whole stream (boot included).
  std::vector<double> rates;
  for (int round = 0; round < 3; ++round) {
    State s;
    const auto t0 = Clock::now();
    std::uint64_t seq = 0;
    for (const auto& e : events) sm::Apply(s, ++seq, e);
    rates.push_back(static_cast<double>(events.size()) / Seconds(Clock::now() - t0));
    if (s.last_seq != events.size()) Die("apply lost events");
  }
  Row("Apply only, events/s", Fmt("%.0f", Percentile(rates, 0.5)),
      Fmt("median of 3 over %.0f events", static_cast<double>(events.size())));
}

// ---------------------------------------------------------------------------------------------
// 3. Journal from disk: replay and cold start

std::unique_ptr<gfp::store::Journal> OpenJournal(const fs::path& p, gfp::store::OpenMode mode) {
  auto j = gfp::store::Journal::Open(p, mode);
  if (!j.ok()) Die(j.status().message());
  return std::move(j).value();
}

// Builds the journal: boot + workload cycles until `events` events, encoded like
// Engine::Execute does and appended in batches of `batch`. Returns the append rate.
double BuildJournal(const fs::path& path, const gfp::testing::NodeFixture& node,
                    std::uint64_t events, std::size_t batch, double* bytes_per_event) {
  auto journal = OpenJournal(path, gfp::store::OpenMode::kReadWrite);
  std::vector<gfp::store::NewEvent> chunk;
  chunk.reserve(batch);
  double append_secs = 0;
  std::uint64_t appended = 0;
  std::uint64_t bytes = 0;
  auto flush = [&] {
    if (chunk.empty()) return;
    const auto t0 = Clock::now();
    auto r = journal->Append(chunk);
    append_secs += Seconds(Clock::now() - t0);
    if (!r.ok()) Die(r.status().message());
    appended += chunk.size();
    chunk.clear();
  };
  double encode_secs = 0;
  Sim sim;
  sim.sink = [&](const Event& e) {
    const auto t0 = Clock::now();
    chunk.push_back({e.time_unix_micros(), sm::EventTypeName(e), sm::EncodeEvent(e)});
    encode_secs += Seconds(Clock::now() - t0);
    bytes += chunk.back().payload.size();
    if (chunk.size() >= batch) flush();
  };
  BootA100(sim, node);
  Workload work(sim, node);
  while (sim.seq < events) work.Cycle();
  flush();
  *bytes_per_event = static_cast<double>(bytes) / static_cast<double>(appended);
  return static_cast<double>(appended) / (append_secs + encode_secs);
}

double RawCommitMedianMicros(const fs::path& p, int samples) {
  sqlite3* db = nullptr;
  if (sqlite3_open(p.c_str(), &db) != SQLITE_OK) Die("cannot open baseline " + p.string());
  const char* setup =
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);";
  if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db));
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t(v) VALUES(?1)", -1, &stmt, nullptr);
  const std::string payload(96, 'p');
  std::vector<double> out;
  for (int i = -5; i < samples; ++i) {
    const auto start = Clock::now();
    sqlite3_bind_blob(stmt, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
    if (sqlite3_step(stmt) != SQLITE_DONE) Die(sqlite3_errmsg(db));
    sqlite3_reset(stmt);
    if (i >= 0) out.push_back(Micros_(Clock::now() - start));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return Percentile(out, 0.5);
}

struct OpenTiming {
  double median_ms = 0;
  std::uint64_t snapshot_seq = 0;
  std::uint64_t replayed = 0;
};

OpenTiming TimeEngineOpen(const fs::path& path, int rounds) {
  std::vector<double> ms;
  OpenTiming t;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    auto engine = gfp::engine::Engine::Open(path);
    const double took = Millis(Clock::now() - start);
    if (!engine.ok()) Die(engine.status().message());
    ms.push_back(took);
    t.snapshot_seq = (*engine)->recovery().snapshot_seq;
    t.replayed = (*engine)->recovery().events_replayed;
  }
  t.median_ms = Percentile(ms, 0.5);
  return t;
}

void BenchJournal(const fs::path& work, const gfp::testing::NodeFixture& node, std::uint64_t events,
                  bool quick) {
  const fs::path path = work / "replay.db";
  double bytes_per_event = 0;
  const double build_rate = BuildJournal(path, node, events, 1000, &bytes_per_event);
  Row("encode + Journal::Append (1000/batch), events/s", Fmt("%.0f", build_rate),
      ">= 100,000 (engine encoding + store)");
  const std::uint64_t n = OpenJournal(path, gfp::store::OpenMode::kReadOnly)->LastSeq();
  Row("  journal size", Fmt("%.0f events", static_cast<double>(n)),
      Fmt("%.0f bytes/event payload; ", bytes_per_event) +
          Fmt("%.0f MiB file", static_cast<double>(fs::file_size(path)) / (1 << 20)));

  // Replay from disk (page cache warm, as on a plugin restart).
  {
    auto reader = OpenJournal(path, gfp::store::OpenMode::kReadOnly);
    std::vector<double> rates;
    std::vector<double> scan_rates;
    for (int i = 0; i < 3; ++i) {
      gfp::engine::RecoveryReport report;
      const auto start = Clock::now();
      auto state = gfp::engine::Replay(*reader, 0, /*use_snapshots=*/false,
                                       /*check_invariants=*/false, &report);
      const double secs = Seconds(Clock::now() - start);
      if (!state.ok()) Die(state.status().message());
      rates.push_back(static_cast<double>(report.events_replayed) / secs);
      // The store's scan alone over the same file, for the split of the cost.
      std::uint64_t seen = 0;
      const auto t0 = Clock::now();
      auto s = reader->ForEach(1, 0, [&](const gfp::store::StoredEvent&) {
        ++seen;
        return gfp::Status::Ok();
      });
      if (!s.ok()) Die(s.message());
      scan_rates.push_back(static_cast<double>(seen) / Seconds(Clock::now() - t0));
    }
    const double rate = Percentile(rates, 0.5);
    Row("engine::Replay from disk (decode+apply), events/s", Fmt("%.0f", rate),
        std::string(">= 2,000,000: ") + (rate >= 2e6 ? "met" : "MISSED"));
    gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
        "replay_events_per_s", rate,
        Fmt("median of 3, %.0f events, page cache warm", static_cast<double>(n))));
    Row("  of which Journal::ForEach scan alone, events/s",
        Fmt("%.0f", Percentile(scan_rates, 0.5)), "median of 3");
  }

  const int rounds = quick ? 1 : 3;
  // Cold start without a snapshot: the whole journal is replayed.
  const OpenTiming none = TimeEngineOpen(path, rounds);
  Row("Engine::Open, no snapshot", Fmt("%.1f ms", none.median_ms),
      Fmt("replayed %.0f events", static_cast<double>(none.replayed)));

  // With a snapshot 9,999 events before the end: the worst case with snapshot_every = 10,000.
  if (n > 10'000) {
    const std::uint64_t at = n - 9'999;
    auto state = [&] {
      auto reader = OpenJournal(path, gfp::store::OpenMode::kReadOnly);
      auto s = gfp::engine::Replay(*reader, at, false, false);
      if (!s.ok()) Die(s.status().message());
      return std::move(s).value();
    }();
    {
      auto writer = OpenJournal(path, gfp::store::OpenMode::kReadWrite);
      auto saved = writer->SaveSnapshot(at, sm::EncodeSnapshot(state));
      if (!saved.ok()) Die(saved.message());
    }
    const OpenTiming tail = TimeEngineOpen(path, quick ? 1 : 5);
    Row("Engine::Open, snapshot + 9,999-event tail", Fmt("%.1f ms", tail.median_ms),
        std::string("<= 200 ms: ") + (tail.median_ms <= 200 ? "met" : "MISSED") +
            Fmt(" (tail %.0f)", static_cast<double>(tail.replayed)));
  }

  // With a snapshot at the end (Engine::Snapshot on the open engine).
  {
    auto engine = gfp::engine::Engine::Open(path);
    if (!engine.ok()) Die(engine.status().message());
    const auto t0 = Clock::now();
    auto s = (*engine)->Snapshot();
    if (!s.ok()) Die(s.message());
    Row("Engine::Snapshot() (encode + save + prune)", Fmt("%.2f ms", Millis(Clock::now() - t0)),
        Fmt("%.0f bytes", static_cast<double>(sm::EncodeSnapshot((*engine)->CopyState()).size())));
  }
  const OpenTiming full = TimeEngineOpen(path, quick ? 1 : 5);
  Row("Engine::Open, snapshot at the last event", Fmt("%.1f ms", full.median_ms),
      std::string("<= 200 ms: ") + (full.median_ms <= 200 ? "met" : "MISSED") +
          Fmt(" (tail %.0f)", static_cast<double>(full.replayed)));
}

// ---------------------------------------------------------------------------------------------
// 4. Engine::Execute: one durable transaction per decision.

void BenchEngineExecute(const fs::path& work, const gfp::testing::NodeFixture& node, double seconds,
                        int baseline_samples) {
  const double base_us = RawCommitMedianMicros(work / "baseline.db", baseline_samples);
  Row("raw SQLite 1-row INSERT commit, median", Fmt("%.1f us", base_us),
      "baseline (WAL, synchronous=FULL)");

  auto opened = gfp::engine::Engine::Open(work / "engine.db");
  if (!opened.ok()) Die(opened.status().message());
  gfp::engine::Engine& engine = **opened;
  std::uint64_t decisions = 0;
  std::uint64_t events = 0;
  // A tiny command runner with the plugin's saga shape.
  Micros now = 1'700'000'000'000'000;
  auto execute = [&](const sm::Command& c) {
    auto d = engine.Execute(c);
    if (!d.ok()) Die(d.status().message());
    ++decisions;
    events += d->events.size();
    return std::move(d).value();
  };
  auto chain = [&](const sm::Command& c) {
    sm::Decision first = execute(c);
    std::vector<sm::Effect> effects = first.effects;
    for (std::size_t i = 0; i < effects.size(); ++i) {
      sm::Decision d = execute(sm::OutcomeOf(effects[i], now += 1000, gfp::events::FmResult()));
      effects.insert(effects.end(), d.effects.begin(), d.effects.end());
    }
    return first;
  };
  {
    sm::StartPlugin start;
    start.now = now;
    start.version = "bench";
    start.fabric_manager_enabled = true;
    execute(start);
    execute(gfp::testing::InventoryOf(node, now));
    execute(gfp::testing::MappingOf(node, now));
    sm::ObserveFabricManagerConnection conn;
    conn.now = now;
    conn.connected = true;
    conn.address = "/run/nvidia-fabricmanager/fmpm.sock";
    conn.connect_params_version = 2;
    execute(conn);
    sm::ObserveFabricState table;
    table.now = now;
    table.partitions = gfp::testing::PartitionsOf(node);
    execute(table);
  }
  decisions = 0;
  events = 0;
  std::uint64_t chains = 0;
  std::uint64_t rng = 12345;
  const auto start = Clock::now();
  while (Seconds(Clock::now() - start) < seconds) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::size_t index =
        1 + static_cast<std::size_t>((rng >> 33) % (node.partitions.size() - 1));
    sm::RequestAllocation r;
    r.now = (now += 1000);
    r.resource = node.resource;
    r.device_ids = PartitionBdfs(node, index);
    chain(r);
    ++chains;
  }
  const double secs = Seconds(Clock::now() - start);
  const double per_commit_us = secs * 1e6 / static_cast<double>(decisions);
  Row("Engine::Execute (1 transaction/decision), decisions/s",
      Fmt("%.0f", static_cast<double>(decisions) / secs),
      Fmt("%.1f us/commit = ", per_commit_us) + Fmt("%.2fx baseline", per_commit_us / base_us));
  Row("Engine::Execute, events/s", Fmt("%.0f", static_cast<double>(events) / secs),
      Fmt("%.2f events/commit; ", static_cast<double>(events) / static_cast<double>(decisions)) +
          Fmt("%.0f chains", static_cast<double>(chains)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin state-machine / engine benchmark"};
  std::string dir_flag;
  std::string json_path;
  std::uint64_t events = 1'000'000;
  int samples = 20'000;
  bool quick = false;
  bool keep = false;
  app.add_option("--dir", dir_flag, "directory on the disk to measure (default: a temp dir)");
  app.add_option("--json", json_path, "also write the figures to this file as JSON");
  app.add_option("--events", events, "events in the replay journal")->check(CLI::PositiveNumber);
  app.add_option("--samples", samples, "GetPreferredAllocation calls per case")
      ->check(CLI::PositiveNumber);
  app.add_flag("--quick", quick, "tiny run (smoke test): 20,000 events, 300 samples");
  app.add_flag("--keep", keep, "keep the benchmark files");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    events = std::min<std::uint64_t>(events, 20'000);
    samples = std::min(samples, 300);
  }

  const fs::path base = dir_flag.empty() ? fs::temp_directory_path() : fs::path(dir_flag);
  std::string tmpl = (base / "bench-statemachine-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) Die("cannot create a directory under " + base.string());
  const fs::path work = tmpl;
  const gfp::testing::NodeFixture node = gfp::testing::A100Node();

  std::printf("state-machine benchmark in %s (HGX A100: %zu GPUs, %zu partitions)%s\n\n",
              work.c_str(), node.bdfs_by_module.size(), node.partitions.size(),
              quick ? " [--quick]" : "");
  Header();
  BenchPreferred(node, samples);
  BenchDecideApply(node, quick ? 2'000 : 50'000);
  BenchJournal(work, node, events, quick);
  BenchEngineExecute(work, node, quick ? 0.3 : 3.0, quick ? 20 : 300);
  gfp::bench::Figures().Print();
  if (!json_path.empty()) gfp::bench::Figures().WriteJson(json_path, quick);

  if (!keep) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  return 0;
}
