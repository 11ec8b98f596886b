// What every benchmark prints with: percentiles, a markdown table of metric / value / note
// (Header/Row), and the SPEC §7 figures (Figure/Figures) with target, ratio and verdict, printed
// as one table and written as JSON (--json PATH) so runs can be compared and merged
// (bench/report/bench_figures). Benchmarks report figures and never fail on timing.
#pragma once

#include <errno.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gfp::bench {

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto idx = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

inline std::string Fmt(const char* fmt, double v) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

inline void Header() {
  std::printf("| %-58s | %20s | %-46s |\n", "metric", "value", "target / note");
  std::printf("|%s|%s|%s|\n", std::string(60, '-').c_str(), std::string(22, '-').c_str(),
              std::string(48, '-').c_str());
}

inline void Row(const std::string& metric, const std::string& value, const std::string& note) {
  std::printf("| %-58s | %20s | %-46s |\n", metric.c_str(), value.c_str(), note.c_str());
  std::fflush(stdout);
}

[[noreturn]] inline void Die(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(2);
}

// ---------------------------------------------------------------------------------------------
// SPEC §7 figures.

// How a figure is judged: value <= target, value >= target, or only reported (no target).
enum class Goal { kAtMost, kAtLeast, kReport };

struct Figure {
  std::string id;    // stable key across runs and benches, e.g. "allocate_disk_vs_commit"
  std::string name;  // what the table prints
  double value = 0;
  std::string unit;  // "x commit", "us", "ms", "events/s", "MiB", "% of a core", "bytes"
  Goal goal = Goal::kReport;
  double target = 0;  // unused for kReport
  std::string note;   // how it was measured (samples, basis, what it includes)
  std::string bench;  // the benchmark that measured it (set by FigureSet::Add)
};

// "met", "MISSED" or "reported"; "not run" for a NaN value (a merged table's missing figure).
inline std::string VerdictOf(const Figure& f) {
  if (std::isnan(f.value)) return "not run";
  if (f.goal == Goal::kReport) return "reported";
  const bool met = f.goal == Goal::kAtMost ? f.value <= f.target : f.value >= f.target;
  return met ? "met" : "MISSED";
}

// value / target; NaN for a reported figure. Below 1 is good for kAtMost, above 1 for kAtLeast.
inline double RatioOf(const Figure& f) {
  if (f.goal == Goal::kReport || f.target == 0) return std::nan("");
  return f.value / f.target;
}

inline std::string TargetText(const Figure& f) {
  if (f.goal == Goal::kReport) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), f.target >= 1000 ? "%s %.0f" : "%s %.6g",
                f.goal == Goal::kAtMost ? "<=" : ">=", f.target);
  return buf;
}

// A value with a precision that suits its size (1234567 -> "1234567", 0.0421 -> "0.0421").
inline std::string ValueText(double v) {
  if (std::isnan(v)) return "-";
  const double a = std::fabs(v);
  return Fmt(a >= 1000 ? "%.0f" : a >= 10 ? "%.1f" : a >= 0.1 ? "%.2f" : "%.4f", v);
}

// One SPEC §7 row the benches know of, in SPEC order. A merged table lists every one of them,
// also those no bench of the run measured (another benchmark owns them, or it was not run).
struct Spec7Entry {
  const char* id;
  const char* name;
  const char* unit;
  Goal goal;
  double target;
  const char* bench;  // where it is measured
};

inline const std::vector<Spec7Entry>& Spec7Catalogue() {
  static const std::vector<Spec7Entry> kCatalogue = {
      // SPEC §7 states the isolated call's target against its floor measured in the same run
      // (two commits + an empty round trip + the FM call) and asks for the ratio too.
      {"allocate_beyond_floor_us", "Allocate with FM over gRPC (binary, disk): median - floor",
       "us", Goal::kAtMost, 150, "bench_plugin"},
      {"allocate_disk_vs_commit", "Allocate with FM over gRPC (binary, disk): median / commit",
       "x commit", Goal::kReport, 0, "bench_plugin"},
      {"gpa_inprocess_p99_worst", "GetPreferredAllocation, state machine alone: p99, worst row",
       "us", Goal::kAtMost, 20, "bench_statemachine"},
      {"gpa_grpc_p99_worst", "GetPreferredAllocation over gRPC: p99, worst row", "us",
       Goal::kAtMost, 1000, "bench_plugin"},
      // The same targets through the plugin core (PluginCore::Preferred, no gRPC), and both
      // while Allocates commit back to back: reads never wait on the disk.
      {"gpa_grpc_p99_under_commits_worst",
       "GetPreferredAllocation over gRPC, under commits: p99, worst", "us", Goal::kAtMost, 1000,
       "bench_plugin"},
      {"gpa_inprocess_core_p99_worst", "GetPreferredAllocation, core (no gRPC): p99, worst row",
       "us", Goal::kAtMost, 20, "bench_plugin"},
      {"gpa_inprocess_p99_under_commits_worst",
       "GetPreferredAllocation, core, under commits: p99, worst row", "us", Goal::kAtMost, 20,
       "bench_plugin"},
      {"replay_events_per_s", "Replay from disk (decode + apply)", "events/s", Goal::kAtLeast,
       2'000'000, "bench_statemachine"},
      {"cold_start_registered_ms", "Cold start to registered, 1,000,000-event journal", "ms",
       Goal::kAtMost, 200, "bench_plugin"},
      {"append_batched_events_per_s", "Journal append throughput with batching", "events/s",
       Goal::kAtLeast, 100'000, "bench_journal"},
      {"steady_rss_mib", "Steady state RSS (max)", "MiB", Goal::kAtMost, 40, "bench_plugin"},
      {"steady_idle_cpu_percent", "Steady state idle CPU", "% of a core", Goal::kAtMost, 0.5,
       "bench_plugin"},
      {"allocate_cpu_beyond_commits_us", "CPU per Allocate beyond its commits (serve alone)", "us",
       Goal::kAtMost, 300, "bench_plugin"},
      {"prepare_beyond_floor_us", "NodePrepareResources 4 GPUs (binary, disk): median - floor",
       "us", Goal::kAtMost, 150, "bench_dra"},
      {"prepare_disk_vs_commit", "NodePrepareResources 4 GPUs (binary, disk): median / commit",
       "x commit", Goal::kReport, 0, "bench_dra"},
      {"api_calls_per_prepare", "API calls per first Prepare of a claim", "calls", Goal::kAtMost, 1,
       "bench_dra"},
      {"api_calls_per_unprepare", "API calls per Unprepare", "calls", Goal::kAtMost, 0,
       "bench_dra"},
      {"slice_republish_max_ms", "ResourceSlice republished after a change (max)", "ms",
       Goal::kAtMost, 1000, "bench_dra"},
      {"dra_steady_rss_mib", "Steady state RSS, DRA mode (max)", "MiB", Goal::kAtMost, 40,
       "bench_dra"},
      {"dra_steady_idle_cpu_percent", "Steady state idle CPU, DRA mode", "% of a core",
       Goal::kAtMost, 0.5, "bench_dra"},
      {"journal_bytes_per_alloc_release", "Journal bytes per allocation-and-release", "bytes",
       Goal::kReport, 0, "bench_history"},
      {"history_query_10m_s", "`journal history --partition N --since T`, 10 M events", "s",
       Goal::kAtMost, 1, "bench_history"},
      {"history_query_10m_cold_s", "  of which: journal not in the page cache (worst T)", "s",
       Goal::kReport, 0, "bench_history"},
      {"history_query_10m_warm_s", "  of which: run again at once (worst T)", "s", Goal::kReport, 0,
       "bench_history"},
      {"state_at_10m_s", "`journal state --at SEQ`, 10 M events", "s", Goal::kAtMost, 1,
       "bench_history"},
      {"schema1_index_seconds", "Indexing a schema-1 journal at the first start (--schema-1)", "s",
       Goal::kReport, 0, "bench_history"},
  };
  return kCatalogue;
}

inline const Spec7Entry* FindSpec7(const std::string& id) {
  for (const Spec7Entry& e : Spec7Catalogue()) {
    if (id == e.id) return &e;
  }
  return nullptr;
}

// A catalogued figure: name, unit, goal and target from the catalogue.
inline Figure Spec7Figure(const std::string& id, double value, std::string note = "") {
  const Spec7Entry* e = FindSpec7(id);
  if (e == nullptr) Die("no SPEC §7 figure \"" + id + "\" in bench_report.h");
  return Figure{id, e->name, value, e->unit, e->goal, e->target, std::move(note), ""};
}

inline const char* GoalName(Goal g) {
  return g == Goal::kAtMost ? "at_most" : g == Goal::kAtLeast ? "at_least" : "report";
}

// Prints `figures` as one markdown table: figure, value, unit, target, ratio, verdict, note.
inline void PrintFigureTable(const std::vector<Figure>& figures) {
  std::printf("| %-60s | %12s | %-11s | %12s | %7s | %-8s | %s\n", "figure", "value", "unit",
              "target", "ratio", "verdict", "note |");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(62, '-').c_str(),
              std::string(14, '-').c_str(), std::string(13, '-').c_str(),
              std::string(14, '-').c_str(), std::string(9, '-').c_str(),
              std::string(10, '-').c_str(), std::string(6, '-').c_str());
  for (const Figure& f : figures) {
    const double ratio = RatioOf(f);
    std::printf("| %-60s | %12s | %-11s | %12s | %7s | %-8s | %s |\n", f.name.c_str(),
                ValueText(f.value).c_str(), f.unit.c_str(), TargetText(f).c_str(),
                std::isnan(ratio) ? "-" : Fmt("%.2fx", ratio).c_str(), VerdictOf(f).c_str(),
                f.note.c_str());
  }
  std::fflush(stdout);
}

// The figures one benchmark run measured.
class FigureSet {
 public:
  void Add(Figure f) {
    f.bench = program_invocation_short_name;
    figures_.push_back(std::move(f));
  }
  const std::vector<Figure>& all() const { return figures_; }

  // The table: catalogued (SPEC §7) figures first, in SPEC order, then the others as measured.
  void Print() const {
    std::vector<Figure> ordered;
    for (const Spec7Entry& e : Spec7Catalogue()) {
      for (const Figure& f : figures_) {
        if (f.id == e.id) ordered.push_back(f);
      }
    }
    for (const Figure& f : figures_) {
      if (FindSpec7(f.id) == nullptr) ordered.push_back(f);
    }
    std::printf("\nSPEC §7 figures of %s (ratio = value / target)\n\n",
                program_invocation_short_name);
    PrintFigureTable(ordered);
  }

  // {"bench": ..., "quick": ..., "figures": [{id, name, value, unit, goal, target, ratio,
  // verdict, note, bench}]}; dies when the file cannot be written.
  void WriteJson(const std::string& path, bool quick) const {
    nlohmann::json list = nlohmann::json::array();
    for (const Figure& f : figures_) {
      const double ratio = RatioOf(f);
      list.push_back({{"id", f.id},
                      {"name", f.name},
                      {"value", std::isfinite(f.value) ? nlohmann::json(f.value) : nullptr},
                      {"unit", f.unit},
                      {"goal", GoalName(f.goal)},
                      {"target", f.target},
                      {"ratio", std::isfinite(ratio) ? nlohmann::json(ratio) : nullptr},
                      {"verdict", VerdictOf(f)},
                      {"note", f.note},
                      {"bench", f.bench}});
    }
    const nlohmann::json doc = {
        {"bench", program_invocation_short_name}, {"quick", quick}, {"figures", list}};
    std::ofstream out(path, std::ios::trunc);
    out << doc.dump(2) << "\n";
    out.flush();
    if (!out) Die("cannot write " + path);
  }

 private:
  std::vector<Figure> figures_;
};

// The figures of this process's run.
inline FigureSet& Figures() {
  static FigureSet set;
  return set;
}

}  // namespace gfp::bench
