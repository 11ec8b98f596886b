#!/usr/bin/env bash
# CI: checks deploy/ (docs/deployment.md) without a cluster.
#  - renders every kustomization under deploy/ with `kubectl kustomize` from Debian 12's
#    kubernetes-client (kubectl 1.20, kustomize v2.0.3: the oldest the manifests support; its
#    .deb is unpacked into build/check-deploy/, so a kubectl the machine has is left alone);
#  - validates every rendered object against the Kubernetes API schemas, the ServiceMonitor and
#    PrometheusRule against the Prometheus Operator's, unknown fields included (tests/deploy/,
#    npm packages kubernetes-models and yaml, pinned in its package-lock.json);
#  - checks the DaemonSet against `gpu-fabric-plugin serve --help`: every env it sets is a flag's
#    env, every path the plugin uses (flag default or env value) is on a mount (writable where the
#    plugin writes) and every mount serves one, the probes are on the metrics address's port;
#  - validates every resource.k8s.io/v1 object (DeviceClass, ResourceClaimTemplate, …) against the
#    vendored OpenAPI schema in ../shared/reference/dra/ (tests/common/schema_check.py; skipped
#    with a notice where that folder is absent, as the C++ tests do; GFP_REFERENCE_DIR overrides
#    it), and checks deploy/dra's structure (tests/deploy/dra.mjs: --mode=dra and no device-plugin
#    mount, the admission policy and binding name the account, the DeviceClass CEL names the
#    driver, fm-Ngpu has N requests under one partition<N> constraint, the VM example's requests
#    exist in its template);
#  - checks every metric the alerts and the dashboard use is one of SPEC §8.1's (docs/metrics.md);
#  - runs the init container's wait-for-vfio.sh on fake sysfs trees, and deploy/audit's
#    journal-anchor.sh against a fake kubectl with BINARY's `journal copy` and `verify`;
#  - renders each broken kustomization of tests/deploy/broken/ and requires the check to fail on
#    it with the problem its expected-problem file names (so the check is shown to catch them;
#    one with a needs-reference file only where the reference folder is there).
#   scripts/check-deploy.sh [BINARY]    (default build/gpu-fabric-plugin)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-build/gpu-fabric-plugin}
work=build/check-deploy
mkdir -p "$work/rendered"
rm -f "$work"/rendered/*

install_tools() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  if [[ ! -x $work/kubectl/usr/bin/kubectl ]]; then
    rm -rf "$work/kubectl" "$work"/kubernetes-client_*.deb
    # Stale or missing package lists: update once and try again. (As root, apt warns that the
    # download runs unsandboxed; that is expected here.)
    if ! (cd "$work" && apt-get download -qq kubernetes-client 2>/dev/null); then
      apt-get update -qq
      (cd "$work" && apt-get download -qq kubernetes-client 2>&1 | grep -v unsandboxed) || true
    fi
    local deb
    deb=$(compgen -G "$work/kubernetes-client_*.deb") ||
      { echo "check-deploy: could not download Debian's kubernetes-client package" >&2; exit 1; }
    dpkg-deb -x "$deb" "$work/kubectl"
  fi
  (cd tests/deploy && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

kubectl_=$work/kubectl/usr/bin/kubectl

render() {  # render DIR OUT
  if ! "$kubectl_" kustomize "$1" >"$2" 2>"$2.err"; then
    echo "check-deploy: kubectl kustomize $1 failed:" >&2
    cat "$2.err" >&2
    exit 1
  fi
}

reference=${GFP_REFERENCE_DIR:-../shared/reference}
openapi=$reference/dra/resource.k8s.io_v1_openapi.json

# The resource.k8s.io/v1 objects of the rendered files against the vendored schema.
check_schema() {  # check_schema FILE...
  [[ -f $openapi ]] || return 0
  node tests/deploy/to-json.mjs "$@" >"$work/objects.json"
  python3 tests/common/schema_check.py openapi-kinds "$openapi" "$work/objects.json"
}

check() {  # check [--dashboard F] NAME=FILE...
  local rc=0 files=() arg
  for arg in "$@"; do [[ $arg == *=* ]] && files+=("${arg#*=}"); done
  node tests/deploy/check-manifests.mjs --help-file "$work/serve-help.txt" \
    --operations-md docs/operations.md --metrics-md docs/metrics.md "$@" || rc=1
  check_schema "${files[@]}" || rc=1
  return $rc
}

install_tools
"$kubectl_" version --client --short 2>/dev/null || "$kubectl_" version --client
"$binary" serve --help >"$work/serve-help.txt"

renders=()
while read -r dir; do
  name=${dir#deploy/}
  render "$dir" "$work/rendered/${name//\//_}.yaml"
  renders+=("$name=$work/rendered/${name//\//_}.yaml")
done < <(find deploy -name kustomization.yaml -printf '%h\n' | sort)
[[ -f $openapi ]] || echo "check-deploy: $openapi is absent: the resource.k8s.io/v1 objects are not checked against its schema (skipped)"
check --dashboard deploy/monitoring/dashboard.json "${renders[@]}"

tests/deploy/wait-for-vfio-test.sh deploy/scripts/wait-for-vfio.sh
tests/deploy/journal-anchor-test.sh "$binary" tests/fixtures/journal-v1-demo-day.db

failed=0
for dir in tests/deploy/broken/*/; do
  name=broken-$(basename "$dir")
  if [[ -f $dir/needs-reference && ! -f $openapi ]]; then
    echo "$name: skipped ($openapi is absent)"
    continue
  fi
  render "$dir" "$work/rendered/$name.yaml"
  expected=$(<"$dir/expected-problem")
  if output=$(check "$name=$work/rendered/$name.yaml" 2>&1); then
    echo "check-deploy: $dir passed the check; it must fail with: $expected" >&2
    failed=1
  elif ! grep -qF -- "$expected" <<<"$output"; then
    echo "check-deploy: $dir failed, but not with: $expected; it said:" >&2
    echo "$output" >&2
    failed=1
  else
    echo "$name: refused as expected ($expected)"
  fi
done
((failed == 0))
echo "check-deploy: deploy/ renders and matches the schemas, the flags of $binary and the metrics"
