// Merges the figure files the benchmarks write with --json into one table: every SPEC §7 figure
// in SPEC order (a figure no file has is listed as "not run", with the benchmark that measures
// it), then every other figure, file by file. With --before/--after, one table of two runs: the
// value of each figure in both, the change, and the after run's ratio and verdict.
//
//   bench_figures FILE.json...
//   bench_figures --before FILE.json... --after FILE.json...
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_report.h"

namespace {

using gfp::bench::Figure;
using gfp::bench::Goal;

Goal GoalOf(const std::string& name) {
  if (name == "at_most") return Goal::kAtMost;
  if (name == "at_least") return Goal::kAtLeast;
  return Goal::kReport;
}

std::vector<Figure> ReadFigures(const std::string& path) {
  std::ifstream in(path);
  if (!in) gfp::bench::Die("cannot read " + path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("figures") || !doc["figures"].is_array()) {
    gfp::bench::Die(path + " is not a benchmark figure file (no \"figures\" array)");
  }
  std::vector<Figure> out;
  const bool quick = doc.value("quick", false);
  for (const auto& f : doc["figures"]) {
    if (!f.is_object()) gfp::bench::Die(path + ": a figure is not an object");
    Figure figure;
    figure.id = f.value("id", "");
    figure.name = f.value("name", figure.id);
    figure.value =
        f.contains("value") && f["value"].is_number() ? f["value"].get<double>() : std::nan("");
    figure.unit = f.value("unit", "");
    figure.goal = GoalOf(f.value("goal", "report"));
    figure.target = f.value("target", 0.0);
    figure.note = f.value("note", "");
    figure.bench = f.value("bench", doc.value("bench", ""));
    if (quick) figure.note = "[--quick] " + figure.note;
    out.push_back(std::move(figure));
  }
  return out;
}

// Every SPEC §7 figure in SPEC order (one "not run" row for a figure none of `all` has), then
// the other figures as they come.
std::vector<Figure> Merged(const std::vector<Figure>& all) {
  std::vector<Figure> table;
  for (const auto& entry : gfp::bench::Spec7Catalogue()) {
    bool found = false;
    for (const Figure& f : all) {
      if (f.id == entry.id) {
        table.push_back(f);
        found = true;
      }
    }
    if (!found) {
      table.push_back(Figure{entry.id, entry.name, std::nan(""), entry.unit, entry.goal,
                             entry.target, std::string("measured by ") + entry.bench, ""});
    }
  }
  for (const Figure& f : all) {
    if (gfp::bench::FindSpec7(f.id) == nullptr) {
      Figure shown = f;
      shown.note = shown.note.empty() ? shown.bench : shown.bench + ": " + shown.note;
      table.push_back(std::move(shown));
    }
  }
  return table;
}

std::vector<Figure> ReadAll(const std::vector<std::string>& paths) {
  std::vector<Figure> all;
  for (const std::string& path : paths) {
    for (Figure& f : ReadFigures(path)) all.push_back(std::move(f));
  }
  return all;
}

// The newest figure with `id` in `figures` (NaN value when there is none).
double ValueOf(const std::vector<Figure>& figures, const std::string& id) {
  double value = std::nan("");
  for (const Figure& f : figures) {
    if (f.id == id) value = f.value;
  }
  return value;
}

// One row per figure of `after` (merged), with its value in `before` and the change.
void PrintComparison(const std::vector<Figure>& before, const std::vector<Figure>& after) {
  std::printf("SPEC §7 figures, before and after (ratio and verdict: after)\n\n");
  std::printf("| %-60s | %12s | %12s | %8s | %-11s | %12s | %7s | %-8s |\n", "figure", "before",
              "after", "change", "unit", "target", "ratio", "verdict");
  std::printf(
      "|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(62, '-').c_str(), std::string(14, '-').c_str(),
      std::string(14, '-').c_str(), std::string(10, '-').c_str(), std::string(13, '-').c_str(),
      std::string(14, '-').c_str(), std::string(9, '-').c_str(), std::string(10, '-').c_str());
  for (const Figure& f : Merged(after)) {
    const double old_value = ValueOf(before, f.id);
    const double change = (f.value - old_value) / std::fabs(old_value) * 100;
    const double ratio = gfp::bench::RatioOf(f);
    std::printf("| %-60s | %12s | %12s | %8s | %-11s | %12s | %7s | %-8s |\n", f.name.c_str(),
                gfp::bench::ValueText(old_value).c_str(), gfp::bench::ValueText(f.value).c_str(),
                std::isfinite(change) ? gfp::bench::Fmt("%+.0f%%", change).c_str() : "-",
                f.unit.c_str(), gfp::bench::TargetText(f).c_str(),
                std::isfinite(ratio) ? gfp::bench::Fmt("%.2fx", ratio).c_str() : "-",
                gfp::bench::VerdictOf(f).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> before;
  std::vector<std::string> after;
  std::vector<std::string>* into = &after;
  bool compare = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--before" || arg == "--after") {
      compare = true;
      into = arg == "--before" ? &before : &after;
    } else {
      into->push_back(arg);
    }
  }
  if (after.empty() || (compare && before.empty())) {
    std::fprintf(stderr,
                 "usage: %s FILE.json...\n"
                 "       %s --before FILE.json... --after FILE.json...\n",
                 argv[0], argv[0]);
    return 2;
  }
  if (compare) {
    PrintComparison(ReadAll(before), ReadAll(after));
    return 0;
  }
  std::printf("SPEC §7 figures (ratio = value / target; rows below the catalogue are context)\n\n");
  gfp::bench::PrintFigureTable(Merged(ReadAll(after)));
  return 0;
}
