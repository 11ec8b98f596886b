#!/usr/bin/env bash
# Installs the Debian 12 packages the build, tests and benchmarks need. Idempotent: a second run
# with everything present does not touch apt at all.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang libclang-rt-14-dev lld
  libsqlite3-dev libsqlitecpp-dev sqlite3
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev libprotoc-dev protobuf-compiler
  libspdlog-dev libfmt-dev
  librapidcheck-dev libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libssl-dev libbenchmark-dev
  prometheus-cpp-dev libmicrohttpd-dev libcivetweb-dev
  libyaml-cpp-dev libcurl4-openssl-dev
  clang-format-14 clang-tidy-14 python3 python3-jsonschema
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
