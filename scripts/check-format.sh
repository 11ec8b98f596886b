#!/usr/bin/env bash
# CI: every C/C++ file under src/ sim/ tests/ bench/ fuzz/ is formatted as .clang-format says.
# Pinned to clang-format 14 (Debian 12's): other versions lay out some constructs differently.
#   scripts/check-format.sh   exit 1, clang-format's complaints and the files when one needs
#                             `clang-format -i`
# CLANG_FORMAT overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format-14}
command -v "$clang_format" > /dev/null || clang_format=clang-format
if ! command -v "$clang_format" > /dev/null; then
  echo "check-format: needs clang-format 14 (Debian 12: apt-get install clang-format-14)" >&2
  exit 1
fi
if ! "$clang_format" --version | grep -q 'version 14\.'; then
  echo "check-format: needs clang-format 14, found: $("$clang_format" --version)" >&2
  exit 1
fi
mapfile -d '' files < <(find src sim tests bench fuzz -type f \
  \( -name '*.h' -o -name '*.hpp' -o -name '*.c' -o -name '*.cc' -o -name '*.cpp' \) -print0 |
  sort -z)
# One run over every file (a process per file takes ten times longer on a busy machine).
status=0
report=$("$clang_format" --dry-run -Werror "${files[@]}" 2>&1) || status=$?
mapfile -t failed < <(grep -oE '^[^:]+:[0-9]+:[0-9]+: (warning|error):' <<< "$report" |
  cut -d: -f1 | sort -u)
if ((status != 0)) && ((${#failed[@]} == 0)); then
  echo "$report" >&2
  echo "check-format: clang-format failed (exit $status)" >&2
  exit 1
fi
if ((${#failed[@]})); then
  grep -A2 -m 30 -E '^[^:]+:[0-9]+:[0-9]+: (warning|error):' <<< "$report" >&2 || true
  echo "check-format: ${#failed[@]} of ${#files[@]} files need clang-format -i:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted as .clang-format says"
