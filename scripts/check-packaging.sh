#!/usr/bin/env bash
# CI: checks the Dockerfile without a container engine.
#  - its shape: a debian:12 build stage running the README's scripts, a debian:12-slim runtime
#    stage, ENTRYPOINT ["gpu-fabric-plugin"], CMD ["serve"], no libnvfm shipped; .dockerignore;
#  - every package of RUNTIME_PACKAGES (the runtime stage's apt-get install) exists in Debian 12;
#  - every library `ldd` reports for the binary is owned (dpkg -S) by one of those packages or by
#    a package they depend on, so the image cannot lack a library.
#  - with --rootfs (not in CI: it downloads about 60 MB): also builds the runtime stage's root
#    the way the image gets it (a minimal Debian 12 with apt, then RUNTIME_PACKAGES, by
#    mmdebstrap from this machine's apt sources), copies the stripped binary in, and runs ldd and
#    --help inside it with chroot.
#   scripts/check-packaging.sh [--rootfs] [BINARY]    (default build/gpu-fabric-plugin)
set -euo pipefail
cd "$(dirname "$0")/.."
rootfs=false
if [[ ${1:-} == --rootfs ]]; then
  rootfs=true
  shift
fi
binary=${1:-build/gpu-fabric-plugin}
problems=0

problem() {
  echo "check-packaging: $*" >&2
  problems=$((problems + 1))
}

require_line() {  # require_line FILE REGEX WHAT
  grep -qE "$2" "$1" || problem "$1: $3"
}

require_line Dockerfile '^FROM debian:12 AS build$' "no 'FROM debian:12 AS build' stage"
require_line Dockerfile '^RUN \./scripts/install-deps\.sh && \./scripts/build\.sh' \
  "the build stage does not run ./scripts/install-deps.sh && ./scripts/build.sh"
require_line Dockerfile '^FROM debian:12-slim$' "no 'FROM debian:12-slim' runtime stage"
require_line Dockerfile '^ENTRYPOINT \["gpu-fabric-plugin"\]$' 'no ENTRYPOINT ["gpu-fabric-plugin"]'
require_line Dockerfile '^CMD \["serve"\]$' 'no CMD ["serve"]'
grep -qi 'nvfm' <(grep -E '^(COPY|ADD)' Dockerfile) && problem "Dockerfile copies a libnvfm"
[[ $(grep -c '^FROM ' Dockerfile) -eq 2 ]] || problem "Dockerfile: expected two stages"
for ignored in .git build; do
  grep -qx "$ignored" .dockerignore || problem ".dockerignore does not exclude $ignored"
done

packages=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' Dockerfile)
[[ -n $packages ]] || { problem "Dockerfile: no ARG RUNTIME_PACKAGES=\"...\" line"; exit 1; }
awk '/^FROM debian:12-slim$/ { slim = 1 } /^ARG RUNTIME_PACKAGES=/ && !slim { exit 1 }' Dockerfile ||
  problem "Dockerfile: RUNTIME_PACKAGES is not in the runtime stage"
grep -qw pci.ids <<<"$packages" || problem "the runtime stage does not install pci.ids"
echo "runtime packages: $packages"

# Debian 12's package lists (apt-cache answers from them; empty before an apt-get update).
# (grep reads a captured answer, not a pipe: `grep -q` closing a pipe early would SIGPIPE the
# writer, and pipefail would then call a match a failure.)
in_bookworm() { local answer; answer=$(apt-cache madison "$1" 2>/dev/null) && grep -q ' bookworm' <<<"$answer"; }
if ! in_bookworm libc6; then
  echo "no Debian 12 package lists yet: apt-get update"
  apt-get update -qq
fi
for package in $packages; do
  if ! apt-cache show --no-all-versions "$package" >/dev/null 2>&1; then
    problem "runtime package $package does not exist (apt-cache show)"
  elif ! in_bookworm "$package"; then
    problem "runtime package $package is not in Debian 12 (bookworm)"
  fi
done

# Everything `apt-get install $packages` brings in: the packages and their (pre-)dependencies.
# shellcheck disable=SC2086
installed=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances $packages 2>/dev/null | grep -E '^[^ <]' | sort -u)

owner_of() {  # the package owning a library path, trying both sides of the /usr merge
  local path=$1 owner
  for candidate in "$path" "$(realpath "$path")" "/usr${path}" "${path#/usr}"; do
    owner=$(dpkg -S "$candidate" 2>/dev/null | sed -n '1s/:.*//p') && [[ -n $owner ]] &&
      { echo "$owner"; return; }
  done
}

[[ -x $binary ]] || { problem "$binary: no such binary (build it first)"; exit 1; }
libraries=0
while read -r line; do
  name=${line%% *}
  if [[ $line == *"not found"* ]]; then
    problem "ldd $binary: $name not found on this machine"
    continue
  fi
  path=$(sed -nE 's/.*=> (\/[^ ]+) .*/\1/p; t; s/^(\/[^ ]+) .*/\1/p' <<<"$line")
  [[ -n $path ]] || continue  # linux-vdso: the kernel's, no file
  owner=$(owner_of "$path")
  libraries=$((libraries + 1))
  if [[ -z $owner ]]; then
    problem "$path (ldd $binary) belongs to no Debian package"
  elif ! grep -qx "$owner" <<<"$installed"; then
    problem "$path (ldd $binary) comes from $owner, which the runtime stage does not install: add it to RUNTIME_PACKAGES in Dockerfile"
  fi
done < <(ldd "$binary")

# The runtime stage for real, without a container engine.
check_rootfs() {
  command -v mmdebstrap >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap
  local sources=/etc/apt/sources.list.d/debian.sources scratch
  [[ -f $sources ]] || sources=/etc/apt/sources.list
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/gfp-rootfs-XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$scratch'" EXIT
  echo "building a debian:12-slim-like root with the runtime packages (mmdebstrap)"
  mmdebstrap --quiet --variant=apt --mode=root --include="${packages// /,}" bookworm \
    "$scratch/root" "$sources" || { problem "mmdebstrap could not build the runtime root"; return; }
  strip --strip-unneeded -o "$scratch/root/usr/bin/gpu-fabric-plugin" "$binary"
  local missing
  missing=$(chroot "$scratch/root" ldd /usr/bin/gpu-fabric-plugin | grep 'not found' || true)
  [[ -z $missing ]] || problem "in the runtime root, ldd finds no: $missing"
  chroot "$scratch/root" /usr/bin/gpu-fabric-plugin --help >/dev/null ||
    problem "gpu-fabric-plugin --help fails in the runtime root"
  [[ -f $scratch/root/usr/share/misc/pci.ids ]] || problem "the runtime root has no pci.ids"
  ((problems)) || echo "runtime root: ldd complete, --help runs, pci.ids present"
}
if $rootfs && ((problems == 0)); then check_rootfs; fi

if ((problems)); then
  echo "check-packaging: $problems problem(s)" >&2
  exit 1
fi
echo "check-packaging: Dockerfile ok; all $libraries libraries of $binary come from the runtime packages"
