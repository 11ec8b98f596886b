#!/usr/bin/env bash
# Runs every benchmark in one run and prints the one SPEC §7 table (value, target, ratio,
# verdict), merged from the --json file each benchmark writes; the JSON files are kept so runs can
# be compared.
#   scripts/bench.sh [--quick] [--build DIR] [--out DIR] [--dir DIR] [--compare OLD_OUT_DIR]
#     --quick   tiny run of each benchmark (seconds, not minutes; the figures mean little)
#     --build   the build directory (default: build/ of this checkout; the benchmarks must be built)
#     --out     where the JSON files and the table go (default: a new bench-results-<time>/ in
#               the current directory)
#     --dir     the directory whose disk the benchmarks measure (default: their temp dir)
#     --compare the --out directory of an earlier run: also prints both runs side by side
# A benchmark that is not built is skipped; its figures show as "not run".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

build_dir="$root/build"
out_dir="bench-results-$(date -u +%Y%m%dT%H%M%SZ)"
quick=0
disk_args=()
compare_dir=""
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --build) build_dir="$2"; shift ;;
    --out) out_dir="$2"; shift ;;
    --dir) disk_args=(--dir "$2"); shift ;;
    --compare) compare_dir="$2"; shift ;;
    *) echo "usage: $0 [--quick] [--build DIR] [--out DIR] [--dir DIR] [--compare OLD_OUT_DIR]" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out_dir"

merge="$build_dir/bench/report/bench_figures"
[[ -x "$merge" ]] || { echo "$merge is not built (cmake --build $build_dir --target bench_figures)" >&2; exit 2; }

# name, then its arguments for a quick run.
benches=(
  "journal/bench_journal|--quick"
  "statemachine/bench_statemachine|--quick"
  "plugin/bench_plugin|--quick"
  "history/bench_history|--quick"
  "dra/bench_dra|--quick"
  "soak/bench_soak|--quick"
)
jsons=()
for entry in "${benches[@]}"; do
  path="${entry%%|*}"
  name="$(basename "$path")"
  binary="$build_dir/bench/$path"
  if [[ ! -x "$binary" ]]; then
    echo "== $name: not built, skipped" | tee -a "$out_dir/skipped.txt"
    continue
  fi
  args=()
  if ((quick)); then read -r -a args <<<"${entry#*|}"; fi
  echo "== $name ${args[*]:-}"
  if ! "$binary" --help | grep -q -- '--json'; then
    # Its table is printed, but its figures cannot join the merged one.
    "$binary" "${args[@]}" "${disk_args[@]}" | tee "$out_dir/$name.txt"
    continue
  fi
  "$binary" "${args[@]}" "${disk_args[@]}" --json "$out_dir/$name.json" | tee "$out_dir/$name.txt"
  jsons+=("$out_dir/$name.json")
done

echo
"$merge" "${jsons[@]}" | tee "$out_dir/spec7.md"
if [[ -n "$compare_dir" ]]; then
  echo
  "$merge" --before "$compare_dir"/*.json --after "${jsons[@]}" | tee "$out_dir/compare.md"
fi
echo
echo "(JSON, each benchmark's output and this table: $out_dir/)"
