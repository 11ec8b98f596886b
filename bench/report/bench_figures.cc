// Merges the figure files the benchmarks write with --json into one table: every SPEC §7 figure
// in SPEC order (a figure no file has is listed as "not run", with the benchmark that measures
// it), then every other figure, file by file.
//
//   bench_figures FILE.json...
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.json...\n", argv[0]);
    return 2;
  }
  std::vector<Figure> all;
  for (int i = 1; i < argc; ++i) {
    for (Figure& f : ReadFigures(argv[i])) all.push_back(std::move(f));
  }
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
  std::printf("SPEC §7 figures (ratio = value / target; rows below the catalogue are context)\n\n");
  gfp::bench::PrintFigureTable(table);
  return 0;
}
