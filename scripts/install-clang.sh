#!/usr/bin/env bash
# Installs Debian 12's clang 14 with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev)
# and lld when one is missing: the ASan + UBSan build (scripts/test.sh --asan) and the fuzz
# targets (scripts/fuzz.sh) are compiled with clang. Idempotent; needs root only to install.
set -euo pipefail

fuzzer_runtime() { ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -1; }
if command -v clang++ >/dev/null && command -v ld.lld >/dev/null && [[ -n "$(fuzzer_runtime)" ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "$(basename "$0"): clang, libclang-rt-14-dev or lld is missing; install them as root" >&2
  exit 2
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  clang libclang-rt-14-dev lld >/dev/null
