#!/usr/bin/env bash
# clang-tidy 14 with .clang-tidy (bugprone-*, performance-*) over the product's sources, using
# the build's compile_commands.json (configure and build first: generated protobuf headers must
# exist).
#   scripts/tidy.sh [--build DIR] [--changed REF] [-j N]
#     --build DIR    the configured build folder (default build)
#     --changed REF  only src/ .cc files changed since REF (git diff REF), plus the .cc files
#                    beside changed headers; CI's cheap mode
#     -j N           parallel clang-tidy processes (default: nproc)
# Exit 1 when clang-tidy reports anything (warnings are errors); prints the time it took.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
changed_since=""
jobs=$(nproc)
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --changed) changed_since=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--changed REF] [-j N]" >&2; exit 2 ;;
  esac
done
if ! command -v clang-tidy-14 > /dev/null; then
  echo "tidy: needs clang-tidy-14 (Debian 12: apt-get install clang-tidy-14)" >&2
  exit 1
fi
if [[ ! -f $build/compile_commands.json ]]; then
  echo "tidy: no $build/compile_commands.json: configure the build first" >&2
  exit 1
fi

if [[ -n $changed_since ]]; then
  mapfile -t changed < <(git diff --name-only --diff-filter=d "$changed_since" -- 'src/*.cc' \
    'src/*.h')
  files=()
  for file in "${changed[@]}"; do
    case "$file" in
      *.cc) files+=("$file") ;;
      *.h) [[ -f ${file%.h}.cc ]] && files+=("${file%.h}.cc") ;;
    esac
  done
  mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | sed '/^$/d')
else
  mapfile -t files < <(find src -name '*.cc' | sort)
fi
if ((${#files[@]} == 0)); then
  echo "tidy: no source changed since $changed_since"
  exit 0
fi

started=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 4 clang-tidy-14 --quiet -p "$build" > "$log" 2>&1 || status=$?
grep -E '(warning|error): ' "$log" | sort -u || true
if ((status != 0)); then
  grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' "$log" | tail -n 40 >&2
  echo "tidy: clang-tidy found problems (above) in the ${#files[@]} files checked ($((SECONDS - started)) s)" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean ($((SECONDS - started)) s)"
