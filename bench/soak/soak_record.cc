#include "bench/soak/soak_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/bench_report.h"

namespace gfp::bench::soak {
namespace {

double Mib(std::uintmax_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

void PrintDeciles(const SoakRecord& r) {
  std::printf("\n| %-7s | %9s | %24s | %8s | %9s | %5s | %7s | %11s | %10s |\n", "decile", "cycles",
              "Allocate p50/p90/p99 us", "RSS MiB", "anon MiB", "FDs", "threads", "journal MiB",
              "events");
  std::printf(
      "|---------|-----------|--------------------------|----------|-----------|-------|---------|"
      "-------------|------------|\n");
  for (std::size_t d = 0; d < r.samples.size(); ++d) {
    const DecileSample& s = r.samples[d];
    std::string latency = "(start)";
    if (d > 0) {
      const auto& l = r.latency_us_by_decile[d - 1];
      latency = Fmt("%.0f", Percentile(l, 0.5)) + "/" + Fmt("%.0f", Percentile(l, 0.9)) + "/" +
                Fmt("%.0f", Percentile(l, 0.99));
    }
    std::printf("| %-7s | %9llu | %24s | %8.1f | %9.1f | %5d | %7d | %11.2f | %10llu |\n",
                d == 0 ? "start" : std::to_string(d).c_str(),
                static_cast<unsigned long long>(s.cycles_done), latency.c_str(), s.proc.rss_mib,
                s.proc.rss_anon_mib, s.proc.open_fds, s.proc.threads, Mib(s.journal_bytes),
                static_cast<unsigned long long>(s.journal_events));
  }
  std::printf(
      "  (a sample is taken after the decile's last cycle: the serve process then has "
      "served %llu cycles since its start)\n",
      static_cast<unsigned long long>(r.samples.back().process_cycles));
}

void PrintRestarts(const SoakRecord& r) {
  if (r.restarts.empty()) return;
  std::printf("\n| %-12s | %14s | %22s | %18s |\n", "restart at", "journal events",
              "exec to registered ms", "serve's replay ms");
  std::printf("|--------------|----------------|------------------------|--------------------|\n");
  for (const RestartSample& s : r.restarts) {
    std::printf("| %12llu | %14llu | %22.1f | %18s |\n", static_cast<unsigned long long>(s.cycle),
                static_cast<unsigned long long>(s.journal_events), s.registered_ms,
                ValueText(s.recovered_ms).c_str());
  }
}

void Add(const std::string& id, const std::string& name, double value, const std::string& unit,
         Goal goal, double target, const std::string& note) {
  Figures().Add(Figure{id, name, value, unit, goal, target, note, ""});
}

std::string Verdict(bool met) { return met ? "met" : "MISSED"; }

// First against last decile: Allocate's median and the serve process's RSS, FDs and threads.
void JudgeFlatness(const SoakRecord& r) {
  const auto& first_latency = r.latency_us_by_decile.front();
  const auto& last_latency = r.latency_us_by_decile.back();
  const double first = Percentile(first_latency, 0.5);
  const double last = Percentile(last_latency, 0.5);
  const double ratio = first > 0 ? last / first : std::nan("");
  Row("Allocate median, first / last decile", Fmt("%.0f", first) + "/" + Fmt("%.0f us", last),
      Fmt("last <= %.2fx first: ", kLatencyLimitRatio) + Verdict(ratio <= kLatencyLimitRatio) +
          Fmt(" (%.3fx)", ratio));
  Add("soak_allocate_last_vs_first", "Soak: Allocate median, last decile / first decile", ratio,
      "x first", Goal::kAtMost, kLatencyLimitRatio,
      Fmt("first %.0f us", first) + Fmt(", last %.0f us", last) +
          Fmt(", last p99 %.0f us", Percentile(last_latency, 0.99)));
  Add("soak_allocate_first_median_us", "Soak: Allocate median, first decile", first, "us",
      Goal::kReport, 0,
      Fmt("p90 %.0f", Percentile(first_latency, 0.9)) +
          Fmt(", p99 %.0f us", Percentile(first_latency, 0.99)));
  Add("soak_allocate_last_median_us", "Soak: Allocate median, last decile", last, "us",
      Goal::kReport, 0,
      Fmt("p90 %.0f", Percentile(last_latency, 0.9)) +
          Fmt(", p99 %.0f us", Percentile(last_latency, 0.99)));

  const ProcSample& a = r.samples[1].proc;  // after the first decile: warmed up
  const ProcSample& b = r.samples.back().proc;
  const double rss_growth = (b.rss_mib - a.rss_mib) / a.rss_mib * 100;
  Row("serve RSS, decile 1 / 10", Fmt("%.1f", a.rss_mib) + "/" + Fmt("%.1f MiB", b.rss_mib),
      Fmt("growth <= %.0f %%: ", kRssGrowthLimitPercent) +
          Verdict(rss_growth <= kRssGrowthLimitPercent) + Fmt(" (%+.1f %%)", rss_growth));
  Add("soak_rss_growth_percent", "Soak: serve RSS growth, decile 1 to 10", rss_growth, "%",
      Goal::kAtMost, kRssGrowthLimitPercent,
      Fmt("%.1f", a.rss_mib) + Fmt(" -> %.1f MiB", b.rss_mib));
  // Code and libraries mapped from files count in RSS once a path first runs (a fault, a
  // restart's replay); the anonymous part (heap, stacks, SQLite's page cache) tells those
  // steps apart from growth with work.
  const double anon_growth = (b.rss_anon_mib - a.rss_anon_mib) / a.rss_anon_mib * 100;
  Row("serve anonymous RSS, decile 1 / 10",
      Fmt("%.1f", a.rss_anon_mib) + "/" + Fmt("%.1f MiB", b.rss_anon_mib),
      Fmt("%+.1f %% (heap, stacks, caches; the rest of RSS is files mapped)", anon_growth));
  Add("soak_rss_anon_growth_percent", "Soak: serve anonymous RSS growth, decile 1 to 10",
      anon_growth, "%", Goal::kReport, 0,
      Fmt("RssAnon %.1f", a.rss_anon_mib) + Fmt(" -> %.1f MiB", b.rss_anon_mib));
  Row("serve open FDs at rest, decile 1 / 10", Fmt("%.0f", a.open_fds) + Fmt("/%.0f", b.open_fds),
      Fmt("growth <= %.0f: ", kFdGrowthLimit) + Verdict(b.open_fds - a.open_fds <= kFdGrowthLimit));
  Add("soak_fd_growth", "Soak: serve open FDs growth, decile 1 to 10", b.open_fds - a.open_fds,
      "fds", Goal::kAtMost, kFdGrowthLimit, Fmt("%.0f", a.open_fds) + Fmt(" -> %.0f", b.open_fds));
  Row("serve threads at rest, decile 1 / 10", Fmt("%.0f", a.threads) + Fmt("/%.0f", b.threads),
      Fmt("growth <= %.0f: ", kThreadGrowthLimit) +
          Verdict(b.threads - a.threads <= kThreadGrowthLimit));
  Add("soak_thread_growth", "Soak: serve threads growth, decile 1 to 10", b.threads - a.threads,
      "threads", Goal::kAtMost, kThreadGrowthLimit,
      Fmt("%.0f", a.threads) + Fmt(" -> %.0f", b.threads));
}

void ReportJournal(const SoakRecord& r) {
  const double per_cycle = static_cast<double>(r.JournalGrowth()) / static_cast<double>(r.cycles);
  const auto events = static_cast<double>(r.samples.back().journal_events);
  Row("journal bytes per cycle (growth to serve's exit / cycles)", Fmt("%.0f B", per_cycle),
      Fmt("%.1f MiB at the end", Mib(r.final_journal_bytes)) + Fmt(", %.0f events", events));
  Add("soak_journal_bytes_per_cycle", "Soak: journal bytes per allocation-and-release", per_cycle,
      "bytes", Goal::kReport, 0,
      Fmt("real serve, faults and restarts included; %.0f events", events));
  Row("`journal verify` of the final journal", Fmt("%.2f s", r.verify_seconds),
      Fmt("the real binary, %.0f events", events));
  Add("soak_verify_s", "Soak: `journal verify` of the final journal", r.verify_seconds, "s",
      Goal::kReport, 0, Fmt("%.0f events", events));
}

void ReportRestarts(const SoakRecord& r) {
  if (!r.restarts.empty()) {
    std::vector<double> ms;
    for (const RestartSample& s : r.restarts) ms.push_back(s.registered_ms);
    const double worst = *std::max_element(ms.begin(), ms.end());
    Row("serve restarts: exec to registered, first / last / max",
        Fmt("%.0f", ms.front()) + "/" + Fmt("%.0f", ms.back()) + "/" + Fmt("%.0f ms", worst),
        Fmt("%.0f restarts (SIGTERM, start again)", static_cast<double>(ms.size())));
    Add("soak_restart_registered_max_ms", "Soak: serve restart, exec to registered (max)", worst,
        "ms", Goal::kReport, 0,
        Fmt("%.0f restarts", static_cast<double>(ms.size())) + Fmt("; last %.0f ms", ms.back()) +
            Fmt(" on %.0f events", static_cast<double>(r.restarts.back().journal_events)));
  }
  if (!r.fm_resync_ms.empty()) {
    const double worst = *std::max_element(r.fm_resync_ms.begin(), r.fm_resync_ms.end());
    Row("FM restarts (resiliency): restart to resynced, median / max",
        Fmt("%.0f", Percentile(r.fm_resync_ms, 0.5)) + Fmt("/%.0f ms", worst),
        Fmt("%.0f FM restarts", static_cast<double>(r.fm_resync_ms.size())));
    Add("soak_fm_resync_max_ms", "Soak: FM restart to resynced by serve (max)", worst, "ms",
        Goal::kReport, 0, Fmt("%.0f FM restarts", static_cast<double>(r.fm_resync_ms.size())));
  }
  if (r.activation_faults > 0) {
    Row("FM activation failures: Allocate refused",
        Fmt("%.0f", r.activation_faults_refused) + Fmt(" of %.0f", r.activation_faults),
        "FM_ST_GENERIC_ERROR injected once each");
  }
}

}  // namespace

void ReportSoak(const SoakRecord& r) {
  PrintDeciles(r);
  PrintRestarts(r);
  std::printf("\n");
  Header();
  JudgeFlatness(r);
  ReportJournal(r);
  ReportRestarts(r);
  Row("cycles / wall time",
      Fmt("%.0f", static_cast<double>(r.cycles)) + Fmt(" / %.0f s", r.wall_seconds),
      Fmt("%.1f ms per cycle", r.wall_seconds * 1000 / static_cast<double>(r.cycles)));
  Add("soak_cycles", "Soak: allocation-and-release cycles", static_cast<double>(r.cycles), "cycles",
      Goal::kReport, 0, Fmt("%.0f s wall", r.wall_seconds));
}

}  // namespace gfp::bench::soak
