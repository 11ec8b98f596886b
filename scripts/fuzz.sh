#!/usr/bin/env bash
# Builds the libFuzzer targets (GFP_FUZZ=ON, clang) in build-fuzz/ (or --build-dir) and runs
# each (up to --jobs at once) for a bounded time on a scratch copy of its checked-in corpus (fuzz/corpus/<target>/ is
# never written to). Fails when a target crashes, leaks, times out on an input or does not stop
# in time; prints runs, execs/s and coverage per target. See docs/fuzzing.md.
#   scripts/fuzz.sh [--seconds-per-target N] [--only TARGET] [--jobs N] [--build-dir DIR] [--keep]
#     --seconds-per-target N  fuzzing time per target (default 20)
#     --only TARGET           run one target (e.g. sysfs_tree); may be repeated
#     --jobs N                build parallelism and targets fuzzed at once (default: nproc)
#     --build-dir DIR         build directory (default build-fuzz)
#     --keep                  keep the scratch corpora (new inputs) and print where they are
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
jobs=$(nproc)
keep=0
build=build-fuzz
only=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds-per-target) seconds="$2"; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "fuzz.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || {
  echo "fuzz.sh: --seconds-per-target needs a positive whole number, not \"$seconds\"" >&2
  exit 2
}

# clang, its libFuzzer runtime (libclang-rt-14-dev) and lld, from Debian.
./scripts/install-clang.sh

start=$(date +%s)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGFP_FUZZ=ON \
  -DGFP_BUILD_TESTS=OFF -DGFP_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target fuzz_all
built=$(date +%s)

targets=()
for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
[[ ${#only[@]} -gt 0 ]] && targets=("${only[@]}")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gfp-fuzz-run-XXXXXX")
[[ $keep -eq 1 ]] || trap 'rm -rf "$scratch"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
# Scratch files of the targets themselves (journals, sysfs trees) go to tmpfs when there is one.
tmp_base=/dev/shm
[[ -d $tmp_base && -w $tmp_base ]] || tmp_base=$scratch
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# One target: fuzz it, write its summary line to $scratch/<t>.line, print its log tail on failure.
run_target() {
  local t=$1 binary=$build/fuzz/fuzz_$1 log=$scratch/$1.log rc=0 dict=()
  [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
  # -timeout: one input taking longer is a hang; the outer timeout catches a stuck start-up.
  GFP_FUZZ_TMP=$(mktemp -d "$tmp_base/gfp-fuzz-$t-XXXXXX") \
    timeout --kill-after=10 $((seconds + 60)) "$binary" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
    "${dict[@]}" "$scratch/$t/corpus" >"$log" 2>&1 || rc=$?
  rm -rf "$tmp_base"/gfp-fuzz-"$t"-*
  local runs speed cov line
  # A target that dies at start-up prints no stats: each may be missing (pipefail, set -e).
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  line=$(printf '%-16s runs %-9s execs/s %-7s %s' "$t" "${runs:-?}" "${speed:-?}" "${cov:-cov: ?}")
  if [[ $rc -ne 0 ]]; then
    line+="  FAILED (exit $rc)"
    { echo "---- $t: last lines of its log ----"
      grep -vE '^#[0-9]+ +(NEW|REDUCE|pulse)|NEW_FUNC' "$log" | tail -40; } >&2
  fi
  echo "$line" | tee "$scratch/$t.line"
}

# Each libFuzzer process uses one core: run up to $jobs targets at once.
for t in "${targets[@]}"; do
  [[ -x $build/fuzz/fuzz_$t && -d fuzz/corpus/$t ]] || { echo "fuzz.sh: no target $t" >&2; exit 2; }
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/tmp"
  cp -r "fuzz/corpus/$t/." "$scratch/$t/corpus/"
done
running=0
for t in "${targets[@]}"; do
  if [[ $running -ge $jobs ]]; then wait -n || true; running=$((running - 1)); fi
  run_target "$t" &
  running=$((running + 1))
done
wait

failed=()
summary=()
for t in "${targets[@]}"; do
  line=$(cat "$scratch/$t.line" 2>/dev/null || echo "$t  FAILED (no result)")
  [[ $line == *FAILED* ]] && failed+=("$t")
  summary+=("$line")
done

echo "---- fuzz summary (${seconds} s per target; build $((built - start)) s, all $(($(date +%s) - start)) s) ----"
printf '%s\n' "${summary[@]}"
[[ $keep -eq 1 ]] && echo "scratch corpora and logs kept in $scratch"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: FAILED: ${failed[*]} (reproducers in $artifacts/)" >&2
  exit 1
fi
