#!/usr/bin/env bash
# CI: builds the Debian packages (cpack -G DEB in build/: gpu-fabric-plugin, what a node runs, and
# gpu-fabric-plugin-demo, the simulator), extracts them into a scratch root (no install into this
# system), and runs the packaged binary from there: --help, then the demo, which must load the
# scratch root's simulated Fabric Manager library, not the build tree's. Checks the packages'
# files and control fields, the maintainer scripts (with stand-ins for systemctl in a private
# mount namespace), and the systemd unit with systemd-analyze verify and security.
#   scripts/test-package.sh [BUILD_DIR]    (default build/, as scripts/build.sh leaves it)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=$(realpath "${1:-build}")

fail() {
  echo "test-package: $*" >&2
  exit 1
}

cmake --build "$build_dir" --target gpu-fabric-plugin nvfm_sim >/dev/null
rm -f "$build_dir"/gpu-fabric-plugin_*.deb "$build_dir"/gpu-fabric-plugin-demo_*.deb
(cd "$build_dir" && cpack -G DEB >/dev/null) || fail "cpack -G DEB failed in $build_dir"
one_deb() {  # one_deb PATTERN: the single .deb matching it
  local found=("$build_dir"/$1)
  [[ ${#found[@]} -eq 1 && -f ${found[0]} ]] || fail "expected one $1 in $build_dir"
  echo "${found[0]}"
}
deb=$(one_deb "gpu-fabric-plugin_*.deb")
demo_deb=$(one_deb "gpu-fabric-plugin-demo_*.deb")
echo "packages: $deb ($(du -h "$deb" | cut -f1)), $demo_deb ($(du -h "$demo_deb" | cut -f1))"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gfp-package-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
root=$scratch/root
dpkg-deb -x "$deb" "$root"

for file in usr/bin/gpu-fabric-plugin \
  usr/lib/systemd/system/gpu-fabric-plugin.service etc/default/gpu-fabric-plugin \
  usr/share/doc/gpu-fabric-plugin/README.md usr/share/doc/gpu-fabric-plugin/operations.md \
  usr/share/doc/gpu-fabric-plugin/packaging.md; do
  [[ -e $root/$file ]] || fail "the package has no /$file"
done
[[ -x $root/usr/bin/gpu-fabric-plugin ]] || fail "/usr/bin/gpu-fabric-plugin is not executable"
# The simulator never reaches a production node with the plugin: it is the demo package's.
simulator=$(dpkg-deb -c "$deb" | grep -E "libnvfm-sim|gpu-fabric-plugin-demo|apisim" || true)
[[ -z $simulator ]] || fail "gpu-fabric-plugin ships simulator files: $simulator"
dpkg-deb -x "$demo_deb" "$root"
for file in usr/lib/gpu-fabric-plugin/libnvfm-sim.so usr/lib/gpu-fabric-plugin/gpu-fabric-plugin-demo \
  usr/lib/gpu-fabric-plugin/libgfp_apisim_openssl3_shim.so; do
  [[ -e $root/$file ]] || fail "the demo package has no /$file"
done
grep -qE "(^|, )gpu-fabric-plugin \(= " <<<"$(dpkg-deb -f "$demo_deb" Depends)" ||
  fail "gpu-fabric-plugin-demo does not depend on its gpu-fabric-plugin"

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
# The unit's hardening, scored by systemd itself (docs/packaging.md): at most 3.0 ("OK").
score=$(systemd-analyze security --offline=true --threshold=30 \
  "$unit_dir/gpu-fabric-plugin.service" 2>&1) ||
  fail "systemd-analyze security: exposure above 3.0: $(grep -o 'Overall exposure.*' <<<"$score")"
echo "systemd-analyze security: $(grep -o 'Overall exposure level.*' <<<"$score")"

# The maintainer scripts, run as dpkg runs them, with systemctl, deb-systemd-invoke and
# deb-systemd-helper replaced by stand-ins that record their arguments, in a private mount
# namespace whose /run is a fresh tmpfs: /run/systemd/system there says "systemd runs" without
# touching this machine's /run.
control=$scratch/control
dpkg-deb -e "$deb" "$control"
for script in postinst prerm postrm; do
  [[ -x $control/$script ]] || fail "the package has no executable $script"
done
stand_ins=$scratch/stand-ins
mkdir -p "$stand_ins"
for tool in systemctl deb-systemd-invoke deb-systemd-helper; do
  printf '#!/bin/sh\necho "%s $*" >>"$GFP_CALLS"\n' "$tool" >"$stand_ins/$tool"
  chmod 755 "$stand_ins/$tool"
done
maintainer_calls() {  # maintainer_calls yes|no SCRIPT ARGS...: the calls it made, ';'-joined
  local systemd=$1 script=$2
  shift 2
  : >"$scratch/calls"
  GFP_CALLS=$scratch/calls PATH="$stand_ins:$PATH" unshare --mount --propagation private \
    sh -c 'mount -t tmpfs tmpfs /run && { [ "$0" = no ] || mkdir -p /run/systemd/system; } &&
           exec sh "$@"' "$systemd" "$control/$script" "$@" ||
    fail "$script $* (systemd: $systemd) failed"
  paste -sd';' "$scratch/calls"
}
expect_calls() {  # expect_calls EXPECTED yes|no SCRIPT ARGS...
  local expected=$1 got
  shift
  got=$(maintainer_calls "$@")
  [[ $got == "$expected" ]] || fail "${*:2} (systemd: $1) called '$got', expected '$expected'"
}
reload="systemctl --system daemon-reload"
expect_calls "$reload" yes postinst configure
expect_calls "$reload;deb-systemd-invoke try-restart gpu-fabric-plugin.service" yes postinst \
  configure 0.0.9
expect_calls "deb-systemd-invoke stop gpu-fabric-plugin.service" yes prerm remove
expect_calls "" yes prerm upgrade 0.2.0
expect_calls "$reload" yes postrm remove
expect_calls "deb-systemd-helper purge gpu-fabric-plugin.service;$reload" yes postrm purge
expect_calls "" no postinst configure 0.0.9
expect_calls "" no prerm remove
echo "maintainer scripts: ok (restart on upgrade, stop on removal, nothing without systemd)"
echo "package test: ok"
