#!/usr/bin/env bash
# Builds and runs the test suites through ctest. Every build is clang's
# (Debian's clang 14): it compiled the files measured in 57-76 % of GCC's time at -O2
# (vgpu_test.cc: 33 s against 58 s), and the build is most of CI's time.
#   scripts/test.sh          every suite, release build in build/
#   scripts/test.sh --asan   every suite, AddressSanitizer + UndefinedBehaviorSanitizer (clang),
#                            build-asan/
#   scripts/test.sh --tsan   the suites where threads meet (integration, crash, simulation: gRPC
#                            server threads, the serve loop, the FM worker, ListAndWatch streams,
#                            the reconciler), ThreadSanitizer, build-tsan/
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
./scripts/install-clang.sh
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo)
compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
tsan_reports=""
case "${1:-}" in
  --asan)
    build_dir=build-asan
    cmake_args+=(-DGFP_SANITIZE=ON -DGFP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug)
    # Line tables only (-g1), as RelWithDebInfo: every frame of a report keeps its file:line.
    cmake_args+=("-DCMAKE_CXX_FLAGS_DEBUG=-g1" "-DCMAKE_C_FLAGS_DEBUG=-g1")
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  --tsan)
    build_dir=build-tsan
    cmake_args+=(-DGFP_TSAN=ON -DGFP_BUILD_BENCH=OFF "-DGFP_TEST_KINDS=integration;crash;simulation")
    # -O1 as TSan's documentation suggests: 14 s instead of 25 s for a gRPC-heavy test file.
    cmake_args+=("-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                 "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
    # Debian's gRPC, abseil and protobuf are not built with TSan: it cannot see their locks, so
    # accesses made from inside them are not checked (ignore_noninstrumented_modules); every
    # access from this project's code still is. Each process that sees a race (test binaries and
    # the serve processes they start, also those a test SIGKILLs) leaves a report file.
    tsan_reports="$PWD/$build_dir/tsan-reports"
    rm -rf "$tsan_reports" && mkdir -p "$tsan_reports"
    export TSAN_OPTIONS="ignore_noninstrumented_modules=1 exitcode=66 log_path=$tsan_reports/race"
    ;;
  "") ;;
  *) echo "usage: $0 [--asan|--tsan]" >&2; exit 2 ;;
esac

cmake -S . -B "$build_dir" "${cmake_args[@]}" "${compiler[@]}"
cmake --build "$build_dir" -j "$(nproc)"
status=0
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 900 || status=$?
if [[ -n "$tsan_reports" ]] && compgen -G "$tsan_reports/race*" > /dev/null; then
  echo "ThreadSanitizer reported races (one file per process):" >&2
  for report in "$tsan_reports"/race*; do echo "== $report" >&2; cat "$report" >&2; done
  status=1
fi
exit "$status"
