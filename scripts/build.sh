#!/usr/bin/env bash
# Release build of the binary (and the simulated Fabric Manager library the demo loads) into
# build/. `scripts/test.sh` builds everything else, with the same compiler (clang: see there).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-clang.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
cmake --build build -j "$(nproc)" --target gpu-fabric-plugin nvfm_sim
