#!/usr/bin/env bash
# The container image, built and run for real (docs/packaging.md, "Running the image"): builds the
# unchanged Dockerfile with podman, then runs the image as deploy/base's rendered DaemonSet says
# (its securityContext, mounts, env and args translated into podman flags by
# tests/image/daemonset_to_podman.py) against a simulated node: a fake sysfs and /dev tree, the
# simulated Fabric Manager library mounted where the host's libnvfm.so.1 would be, and the fake
# kubelet (tests/image/world, speaking real gRPC on the device-plugin sockets). Checks the init
# container, registration, an Allocate with its FM activation, /metrics, /healthz, /readyz, the
# NFD labels file, `journal verify` from the image, and a clean SIGTERM.
#
#   scripts/test-image.sh [--rev REV] [--build-only] [--keep] [--sabotage WHAT]
#     --rev REV       build from `git archive REV` instead of the work tree (a clean export)
#     --build-only    build the image and stop
#     --keep          keep the temporary world folder (printed) afterwards
#     --sabotage libnvfm   mount the simulated FM library at a wrong path in the container: the
#                     checks must FAIL (to show they can)
#
# Not in CI (it takes ~10+ minutes on 2 cores the first time). Needs root (rootful podman) and
# Debian's package mirror; no image registry: debian:12 and debian:12-slim are made with
# mmdebstrap and imported under those names when absent. Engine flags as
# ../shared/reference/containers.md: runc, cgroupfs, explicit nofile/nproc ulimits.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

rev= build_only=0 keep=0 sabotage=
while (($#)); do
  case $1 in
    --rev) rev=$2; shift 2 ;;
    --rev=*) rev=${1#*=}; shift ;;
    --build-only) build_only=1; shift ;;
    --keep) keep=1; shift ;;
    --sabotage) sabotage=$2; shift 2 ;;
    --sabotage=*) sabotage=${1#*=}; shift ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "test-image: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -z $sabotage || $sabotage == libnvfm ]] || { echo "test-image: --sabotage takes libnvfm" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "test-image: run as root (rootful podman)" >&2; exit 2; }

t0=$SECONDS
phase_names=() phase_secs=()
phase_start=$SECONDS
phase() {  # phase NAME: ends the current phase's clock
  phase_names+=("$1")
  phase_secs+=($((SECONDS - phase_start)))
  phase_start=$SECONDS
}
log() { echo "test-image: $*"; }

passed=0 failed=0
pass() { echo "PASS  $*"; passed=$((passed + 1)); }
fail() { echo "FAIL  $*"; failed=$((failed + 1)); }

# --- tools --------------------------------------------------------------------------------------
need=()
for tool in podman:podman buildah:buildah runc:runc mmdebstrap:mmdebstrap curl:curl \
            nsenter:util-linux /usr/bin/python3:python3 git:git; do
  command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
/usr/bin/python3 -c 'import yaml' 2>/dev/null || need+=(python3-yaml)
if ((${#need[@]})); then
  log "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
runc_path=$(command -v runc)
# What works on these machines (containers.md): crun fails on hybrid cgroups, the default
# RLIMIT_NOFILE cannot be set.
podman_=(podman --runtime "$runc_path" --cgroup-manager=cgroupfs)
ulimits=(--ulimit nofile=20000:20000 --ulimit nproc=1000:1000)
phase tools

work=$(mktemp -d /tmp/test-image.XXXXXX)
containers=()
cleanup() {
  local c
  for c in "${containers[@]}"; do "${podman_[@]}" rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  if ((keep)); then
    log "kept $work"
  else
    # Files the containers made as root, sockets included.
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap "exit 130" INT TERM  # so that cleanup runs

# --- the manifests: kubectl kustomize deploy/base, as scripts/check-deploy.sh renders them -------
kubectl_=
for k in build/check-deploy/kubectl/usr/bin/kubectl build/test-image/kubectl/usr/bin/kubectl; do
  [[ -x $k ]] && { kubectl_=$k; break; }
done
if [[ -z $kubectl_ ]]; then
  # Debian 12's kubernetes-client, unpacked (not installed), as check-deploy.sh does.
  mkdir -p build/test-image
  rm -rf build/test-image/kubectl build/test-image/kubernetes-client_*.deb
  if ! (cd build/test-image && apt-get download -qq kubernetes-client 2>/dev/null); then
    apt-get update -qq
    (cd build/test-image && apt-get download -qq kubernetes-client 2>&1 | grep -v unsandboxed) || true
  fi
  deb=$(compgen -G "build/test-image/kubernetes-client_*.deb") ||
    { echo "test-image: could not download Debian's kubernetes-client package" >&2; exit 1; }
  dpkg-deb -x "$deb" build/test-image/kubectl
  kubectl_=build/test-image/kubectl/usr/bin/kubectl
fi
"$kubectl_" kustomize deploy/base >"$work/rendered.yaml"
translate=(/usr/bin/python3 tests/image/daemonset_to_podman.py "$work/rendered.yaml")
image=$("${translate[@]}" image)
log "rendered deploy/base with $kubectl_; the DaemonSet's image: $image"

# --- base images: debian:12 and debian:12-slim, made with mmdebstrap when absent ----------------
mirror=${TEST_IMAGE_MIRROR:-http://deb.debian.org/debian}
security=${TEST_IMAGE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
sources=("deb $mirror bookworm main" "deb $mirror bookworm-updates main"
         "deb $security bookworm-security main")
# debian:12-slim is debian:12 with these dpkg path excludes (debuerreotype's --slimify list);
# they stay in the image (/etc/dpkg/dpkg.cfg.d/), so the runtime stage's apt-get follows them.
slim_opts=()
for p in /usr/share/doc/\* /usr/share/groff/\* /usr/share/info/\* /usr/share/linda/\* \
         /usr/share/lintian/overrides/\* /usr/share/locale/\* /usr/share/man/\*; do
  slim_opts+=(--dpkgopt="path-exclude=$p")
done
slim_opts+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')
make_base() {  # make_base NAME [mmdebstrap options...]
  local name=$1; shift
  if "${podman_[@]}" image exists "$name"; then
    log "$name: present, reused"
    return
  fi
  log "$name: absent; mmdebstrap --variant=minbase bookworm $*"
  mmdebstrap --quiet --variant=minbase "$@" bookworm "$work/base.tar" "${sources[@]}"
  "${podman_[@]}" import --quiet "$work/base.tar" "$name" >/dev/null
  rm -f "$work/base.tar"
}
make_base docker.io/library/debian:12
make_base docker.io/library/debian:12-slim "${slim_opts[@]}"
phase "base images (mmdebstrap)"

# --- the image, from the unchanged Dockerfile ----------------------------------------------------
context=$repo
if [[ -n $rev ]]; then
  context=$work/context
  mkdir -p "$context"
  git archive "$rev" | tar -x -C "$context"
  log "building from git archive $rev ($(git rev-parse --short "$rev"))"
else
  log "building from the work tree $repo"
fi
build_log=$work/build.log
if ! "${podman_[@]}" build --network host "${ulimits[@]}" -f "$context/Dockerfile" \
     -t "$image" "$context" >"$build_log" 2>&1; then
  tail -n 40 "$build_log"
  echo "test-image: podman build failed (above: the end of its log)" >&2
  exit 1
fi
# The build stage, from the layer cache: the simulated world's programs are built on it.
"${podman_[@]}" build --network host "${ulimits[@]}" -f "$context/Dockerfile" --target build \
  -t localhost/gpu-fabric-plugin-build:test-image "$context" >>"$build_log" 2>&1
log "image $image: size $("${podman_[@]}" image inspect --format "{{.Size}}" "$image" | numfmt --to=iec)"
phase "image build"
if ((build_only)); then
  for i in "${!phase_names[@]}"; do log "phase ${phase_names[$i]}: ${phase_secs[$i]}s"; done
  exit 0
fi

# --- the simulated node's programs, on the build stage ------------------------------------------
world_image=localhost/gfp-image-world:test-image
if ! "${podman_[@]}" build --network host "${ulimits[@]}" -f tests/image/Containerfile.world \
     --build-arg BUILD_IMAGE=localhost/gpu-fabric-plugin-build:test-image -t "$world_image" \
     tests/image >>"$build_log" 2>&1; then
  tail -n 40 "$build_log"
  echo "test-image: building tests/image/Containerfile.world failed (above: the end of its log)" >&2
  exit 1
fi
phase "simulated node's programs"

# --- the simulated host: every hostPath of the DaemonSet under $root -----------------------------
root=$work/host
mkdir -p "$root"
node_name=sim-hgx-h100
to_host() { "${translate[@]}" to-host --root "$root" "$1"; }
ds_env() { "${translate[@]}" env "$1"; }
sysfs_host=$(to_host /sys)
dev_host=$(to_host "$("${translate[@]}" flag dev-root /dev)")
mapping_host=$(to_host "$(ds_env GPU_PCI_MODULE_MAPPING_PATH)")
nvfm_host=$(to_host "$(ds_env NVFM_LIBRARY_PATH)")
journal_in_pod=$(ds_env GPU_FABRIC_JOURNAL)
journal_host=$(to_host "$journal_in_pod")
dp_host=$(to_host /var/lib/kubelet/device-plugins)
pr_host=$(to_host /var/lib/kubelet/pod-resources/kubelet.sock)
labels_host=
if labels_in_pod=$(ds_env GPU_FABRIC_NODE_LABELS_FILE 2>/dev/null); then
  labels_host=$(to_host "$labels_in_pod")
fi
# The simulated FM keeps its state in a file (FM is a daemon; the real one is reached over
# /run/nvidia-fabricmanager/fmpm.sock): the only mount and env the test adds to the DaemonSet's.
fm_state_dir=$root/run/nvfm-sim
mkdir -p "$fm_state_dir"
sim_extra=(--extra=--env=NVFM_SIM_STATE=/run/nvfm-sim/state
           --extra=--volume=$fm_state_dir:/run/nvfm-sim:rbind)

# The host's libnvfm.so.1 is the simulated FM library (the real C ABI).
helper=gfp-image-copy-$$
containers+=("$helper")
"${podman_[@]}" create --name "$helper" "$world_image" true >/dev/null
mkdir -p "$(dirname "$nvfm_host")"
"${podman_[@]}" cp "$helper:/usr/local/lib/libnvfm-sim.so" "$nvfm_host"
"${podman_[@]}" rm "$helper" >/dev/null

status=$root/.world/status
mkdir -p "$(dirname "$status")"
world=gfp-image-world-$$
containers+=("$world")
"${podman_[@]}" run -d --name "$world" --log-driver=k8s-file "${ulimits[@]}" --network none \
  --volume "$root:$root:rbind" "$world_image" gfp-image-world \
  --sysfs "$sysfs_host" --dev "$dev_host" --module-mapping "$mapping_host" \
  --fm-state "$fm_state_dir/state" --device-plugin-dir "$dp_host" \
  --pod-resources-socket "$pr_host" --status "$status" --gpus 2 --timeout 120 >/dev/null

running() { [[ $("${podman_[@]}" inspect -f '{{.State.Running}}' "$1" 2>/dev/null) == true ]]; }
# Waits until the world's status file has STEP (ok or failed); prints its line.
world_step() {  # world_step STEP TIMEOUT_SECONDS
  local deadline=$((SECONDS + $2)) line
  while ((SECONDS < deadline)); do
    line=$(grep -m1 "^$1 " "$status" 2>/dev/null) && { echo "$line"; return 0; }
    running "$world" || break
    [[ -n ${plugin:-} ]] && ! running "$plugin" && break  # no point waiting for a dead plugin
    sleep 0.5
  done
  grep -m1 "^$1 " "$status" 2>/dev/null && return 0
  if [[ -n ${plugin:-} ]] && ! running "$plugin"; then
    echo "$1 failed: the plugin's container is not running ($("${podman_[@]}" inspect -f \
      'exit {{.State.ExitCode}}' "$plugin" 2>/dev/null))"
  else
    echo "$1 failed (no answer within $2 s)"
  fi
}
check_step() {  # check_step STEP TIMEOUT DESCRIPTION
  local line
  line=$(world_step "$1" "$2")
  if [[ $line == "$1 ok "* ]]; then pass "$3: ${line#"$1 ok "}"; else fail "$3: $line"; fi
}
check_step world 60 "simulated node (fake sysfs//dev, FM state, fake kubelet)"

# --- the init container, from the image ---------------------------------------------------------
init_name=$(/usr/bin/python3 -c 'import sys,yaml
d=[x for x in yaml.safe_load_all(open(sys.argv[1])) if x and x.get("kind")=="DaemonSet"][0]
print(" ".join(c["name"] for c in d["spec"]["template"]["spec"].get("initContainers",[])))' "$work/rendered.yaml")
for init in $init_name; do
  mapfile -d '' init_args < <("${translate[@]}" run --root "$root" --node-name "$node_name" --init "$init")
  containers+=("gfp-image-init-$$")
  # Bounded here by podman (--timeout): the manifest's own timeout is 10 minutes.
  if out=$("${podman_[@]}" run --name "gfp-image-init-$$" --log-driver=k8s-file --timeout 60 \
             "${ulimits[@]}" "${init_args[@]}" 2>&1); then
    pass "init container $init exits 0: $(tail -n1 <<<"$out")"
  else
    fail "init container $init: exit $?: $out"
  fi
  "${podman_[@]}" rm -f "gfp-image-init-$$" >/dev/null 2>&1 || true
done

# --- the plugin's container, as the DaemonSet runs it -------------------------------------------
mapfile -d '' run_args < <("${translate[@]}" run --root "$root" --node-name "$node_name" \
  ${sabotage:+--sabotage "$sabotage"} "${sim_extra[@]}")
((${#run_args[@]})) || { echo "test-image: the DaemonSet could not be translated" >&2; exit 1; }
log "podman run ${run_args[*]}"
plugin=gfp-image-plugin-$$
containers+=("$plugin")
"${podman_[@]}" run -d --name "$plugin" --log-driver=k8s-file "${ulimits[@]}" "${run_args[@]}" >/dev/null

check_step registration 150 "registration with the fake kubelet"
check_step allocate 60 "Allocate (kubelet's admission of a 2-GPU VM pod)"
check_step fm-active 30 "FM activation (the simulated FM shows the partition active)"

# HTTP on the metrics port, from inside the pod's network namespace.
pid=$("${podman_[@]}" inspect -f '{{.State.Pid}}' "$plugin" 2>/dev/null || echo 0)
http() {  # http PORT PATH BODY_FILE: prints the status code
  if ((pid > 0)); then
    nsenter -t "$pid" -n curl -sS -m 3 -o "$3" -w '%{http_code}' "http://127.0.0.1:$1$2" 2>/dev/null || true
  fi
}
metrics_port=$(ds_env GPU_FABRIC_METRICS_ADDRESS | sed 's/.*://')
declare -A probed=()
while read -r kind path port; do
  [[ -n ${probed[$path]:-} ]] && continue
  probed[$path]=1
  code=
  for _ in $(seq 1 60); do  # readiness follows registration and FM; up to 30 s
    code=$(http "$port" "$path" "$work/body")
    [[ $code == 200 ]] && break
    running "$plugin" || break
    sleep 0.5
  done
  if [[ $code == 200 ]]; then pass "$path ($kind) on port $port: 200 $(head -c 80 "$work/body" | tr '\n' ' ')"
  else fail "$path ($kind) on port $port: ${code:-no answer} $(head -c 200 "$work/body" 2>/dev/null | tr '\n' ' ')"; fi
done < <("${translate[@]}" probes)
code=$(http "$metrics_port" /metrics "$work/metrics")
want_metrics=('gpu_fabric_fabric_manager_up 1' 'gpu_fabric_partitions_active 1'
              'gpu_fabric_partition_operations_total{.*operation="activate".*result="ok"')
missing=()
for m in "${want_metrics[@]}"; do grep -q -- "^$m" "$work/metrics" 2>/dev/null || missing+=("$m"); done
if [[ $code == 200 && ${#missing[@]} -eq 0 ]]; then
  pass "/metrics on port $metrics_port: 200, $(grep -c '^gpu_fabric_' "$work/metrics") gpu_fabric_ samples, FM up, 1 partition active, an activation ok"
else
  fail "/metrics on port $metrics_port: ${code:-no answer}; missing: ${missing[*]}"
fi

# The NFD labels file (SPEC §8.2): written at start, rewritten when the allocation took GPUs.
if [[ -n $labels_host ]]; then
  largest=
  for _ in $(seq 1 20); do
    largest=$(sed -n 's/^gpu-fabric.largest-free-partition=//p' "$labels_host" 2>/dev/null || true)
    [[ -n $largest && $largest -lt 8 ]] && break
    sleep 0.5
  done
  if [[ -n $largest && $largest -lt 8 ]] && grep -q '^gpu-fabric.free-partitions.2=' "$labels_host"; then
    pass "labels file $labels_in_pod: $(grep -v "^#" "$labels_host" | tr "\n" " ")"
  else
    fail "labels file $labels_in_pod (on the host $labels_host): $(cat "$labels_host" 2>&1 | tr '\n' ' ')"
  fi
fi

# journal verify from the image, in the running pod (kubectl exec, docs/deployment.md).
if out=$("${podman_[@]}" exec "$plugin" gpu-fabric-plugin journal verify --journal "$journal_in_pod" 2>&1) &&
   grep -q '^head ' <<<"$out"; then
  pass "journal verify in the running container: $(grep '^head ' <<<"$out")"
else
  fail "journal verify in the running container: $out"
fi

# A clean SIGTERM: exit 0 within the grace period, the socket removed, 'stopped' logged.
grace=$("${translate[@]}" grace)
sockets_before=$(find "$dp_host" -maxdepth 1 -name 'kubevirt-*' 2>/dev/null | tr '\n' ' ')
stop_start=$SECONDS
"${podman_[@]}" stop -t "$grace" "$plugin" >/dev/null 2>&1 || true
stop_secs=$((SECONDS - stop_start))
exit_code=$("${podman_[@]}" inspect -f '{{.State.ExitCode}}' "$plugin" 2>/dev/null || echo '?')
sockets=$(find "$dp_host" -maxdepth 1 -name 'kubevirt-*' 2>/dev/null | tr '\n' ' ')
"${podman_[@]}" logs "$plugin" >"$work/plugin.log" 2>&1 || true
if [[ $exit_code == 0 ]]; then pass "SIGTERM (podman stop -t $grace): exit 0 after ${stop_secs}s"
else fail "SIGTERM (podman stop -t $grace): exit $exit_code after ${stop_secs}s"; fi
if [[ -z $sockets_before ]]; then fail "SIGTERM: the plugin served no socket in $dp_host to remove"
elif [[ -z $sockets ]]; then pass "SIGTERM: the plugin's socket $(basename $sockets_before) is removed"
else fail "SIGTERM: left behind: $sockets"; fi
if grep -qi 'stopped' "$work/plugin.log"; then
  pass "SIGTERM: logged $(grep -i 'stopped' "$work/plugin.log" | tail -n1 | head -c 160)"
else
  fail "SIGTERM: no 'stopped' in the log; its end: $(tail -n 5 "$work/plugin.log")"
fi

# The partition stays active after the plugin stops (its VM keeps running).
"${podman_[@]}" stop -t 10 "$world" >/dev/null 2>&1 || true
line=$(world_step final 5)
active=$(sed -n 's/.*fm-active ok active partitions \[\([0-9,]*\)\].*/\1/p' "$status")
if [[ $line == "final ok active partitions [$active]" && -n $active ]]; then
  pass "after the SIGTERM the partition [$active] is still active in FM"
else
  fail "after the SIGTERM: $line (before: [$active])"
fi

# journal verify from the image once more, on the hostPath journal mounted read-only.
if out=$("${podman_[@]}" run --rm "${ulimits[@]}" --network none --read-only --cap-drop=ALL \
           --security-opt no-new-privileges \
           --volume "$(dirname "$journal_host"):$(dirname "$journal_in_pod"):rbind,ro" \
           "$image" journal verify --journal "$journal_in_pod" 2>&1) && grep -q '^head ' <<<"$out"; then
  pass "journal verify (podman run of the image, journal read-only): $(grep '^head ' <<<"$out")"
else
  fail "journal verify (podman run of the image, journal read-only): $out"
fi
phase "run + checks"

if ((failed)); then
  echo "--- the plugin's log (last 30 lines) ---"
  tail -n 30 "$work/plugin.log" 2>/dev/null || true
  echo "--- the simulated node's steps ---"
  cat "$status" 2>/dev/null || true
fi
for i in "${!phase_names[@]}"; do log "phase ${phase_names[$i]}: ${phase_secs[$i]}s"; done
echo "test-image: $passed passed, $failed failed ($((SECONDS - t0))s)"
((failed == 0))
