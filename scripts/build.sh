#!/usr/bin/env bash
# Release build of the binary (and the simulated Fabric Manager library the demo loads) into
# build/. `scripts/test.sh` builds everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)" --target gpu-fabric-plugin nvfm_sim
