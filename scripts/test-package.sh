#!/usr/bin/env bash
# CI: builds the Debian package (cpack -G DEB in build/), extracts it into a scratch root (no
# install into this system), and runs the packaged binary from there: --help, then the demo, which
# must load the scratch root's simulated Fabric Manager library, not the build tree's. Checks the
# package's files and control fields, and the systemd unit with systemd-analyze verify.
#   scripts/test-package.sh [BUILD_DIR]    (default build/, as scripts/build.sh leaves it)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${1:-build}")

fail() {
  echo "test-package: $*" >&2
  exit 1
}

cmake --build "$build_dir" --target gpu-fabric-plugin nvfm_sim >/dev/null
rm -f "$build_dir"/gpu-fabric-plugin_*.deb
(cd "$build_dir" && cpack -G DEB >/dev/null) || fail "cpack -G DEB failed in $build_dir"
debs=("$build_dir"/gpu-fabric-plugin_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one gpu-fabric-plugin_*.deb in $build_dir"
deb=${debs[0]}
echo "package: $deb ($(du -h "$deb" | cut -f1))"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gfp-package-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
dpkg-deb -x "$deb" "$root"

for file in usr/bin/gpu-fabric-plugin usr/lib/gpu-fabric-plugin/libnvfm-sim.so \
  usr/lib/gpu-fabric-plugin/gpu-fabric-plugin-demo \
  usr/lib/gpu-fabric-plugin/libgfp_apisim_openssl3_shim.so \
  usr/lib/systemd/system/gpu-fabric-plugin.service etc/default/gpu-fabric-plugin \
  usr/share/doc/gpu-fabric-plugin/README.md usr/share/doc/gpu-fabric-plugin/operations.md \
  usr/share/doc/gpu-fabric-plugin/packaging.md; do
  [[ -e $root/$file ]] || fail "the package has no /$file"
done
[[ -x $root/usr/bin/gpu-fabric-plugin ]] || fail "/usr/bin/gpu-fabric-plugin is not executable"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for needed in pci.ids libc6 libgrpc++1.51 libsqlite3-0; do
  grep -qE "(^|, )${needed//+/\\+}( |,|$)" <<<"$depends" || fail "Depends lacks $needed"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/default/gpu-fabric-plugin ||
  fail "/etc/default/gpu-fabric-plugin is not a conffile"

binary=$root/usr/bin/gpu-fabric-plugin
"$binary" --help >"$scratch/help.txt" 2>&1 || { cat "$scratch/help.txt"; fail "--help failed"; }
for verb in serve journal demo; do
  grep -qw "$verb" "$scratch/help.txt" || fail "--help does not mention $verb"
done
echo "--help from the scratch root: ok"

# The demo prints the library it loads (and hands that path to its serve child): it must be the
# one under the scratch root, although the build tree's still exists.
"$binary" demo >"$scratch/demo.txt" 2>&1 || { cat "$scratch/demo.txt"; fail "demo failed"; }
expected="FM library: $root/usr/lib/gpu-fabric-plugin/libnvfm-sim.so "
grep -qF "$expected" "$scratch/demo.txt" || {
  grep -F "FM library:" "$scratch/demo.txt" >&2 || true
  fail "the demo did not load the scratch root's libnvfm-sim.so"
}
grep -qx "demo passed" "$scratch/demo.txt" || fail "the demo did not say 'demo passed'"
echo "demo from the scratch root: ok ($(grep -F "FM library:" "$scratch/demo.txt" | sed 's/^ *//'))"

# systemd-analyze verify (systemd's own parser: unknown keys, bad values, ExecStart executable).
# ExecStart is pointed at the scratch root's binary; any message counts as a failure.
if ! command -v systemd-analyze >/dev/null; then
  echo "installing systemd for systemd-analyze (about 3 MB)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends systemd
fi
unit_dir=$scratch/unit
mkdir -p "$unit_dir"
sed "s#/usr/bin/gpu-fabric-plugin#$binary#" "$root/usr/lib/systemd/system/gpu-fabric-plugin.service" \
  >"$unit_dir/gpu-fabric-plugin.service"
verify_output=$(systemd-analyze verify "$unit_dir/gpu-fabric-plugin.service" 2>&1) ||
  fail "systemd-analyze verify failed: $verify_output"
[[ -z $verify_output ]] || fail "systemd-analyze verify complained: $verify_output"
echo "systemd-analyze verify gpu-fabric-plugin.service: ok"
echo "package test: ok"
