#!/usr/bin/env bash
# CI: deploy/monitoring against Debian's own Prometheus (docs/metrics.md, "How the rules and the
# dashboard are checked"):
#  - installs the `prometheus` package when promtool or the server is missing, without letting
#    its postinst start the daemon (a policy-rc.d that refuses every start, for the install only);
#    no prometheus process may be left running by the install;
#  - extracts the PrometheusRule's `spec` into a plain rules file: `promtool check rules` on it,
#    `promtool test rules` on deploy/monitoring/tests/*.yaml, and every alert must be seen firing
#    and seen not firing there (every recording rule evaluated by a promql_expr_test);
#  - runs the live test (integration_prometheus_test: two real serves, `promtool check metrics` on
#    their /metrics, a real Prometheus on 127.0.0.1 querying every rule and dashboard expression)
#    and fails if it was skipped.
#   scripts/check-prometheus.sh [BUILD_DIR]    (default build; the test is built there if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

install_prometheus() {
  local policy=/usr/sbin/policy-rc.d saved="" before after
  before=$(pgrep -x prometheus | sort || true)
  if [[ -e $policy ]]; then saved=$(mktemp) && cp -p "$policy" "$saved"; fi
  printf '#!/bin/sh\n# check-prometheus.sh: no daemon starts while it installs prometheus\nexit 101\n' \
    >"$policy"
  chmod 755 "$policy"
  local rc=0
  # (Stale or missing package lists: updated first; without a network the cached .deb may do.)
  apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    prometheus python3-yaml >/dev/null || rc=$?
  if [[ -n $saved ]]; then mv "$saved" "$policy"; else rm -f "$policy"; fi
  [[ $rc -eq 0 ]] || { echo "check-prometheus: installing prometheus failed" >&2; exit 1; }
  # Should a start have slipped through anyway (no invoke-rc.d in the path): stop what the
  # install started, by its pid, and leave the machine as it was.
  after=$(pgrep -x prometheus | sort || true)
  local pid
  for pid in $(comm -13 <(echo "$before") <(echo "$after")); do
    echo "check-prometheus: stopping the prometheus daemon the install started (pid $pid)"
    if command -v systemctl >/dev/null && systemctl is-active -q prometheus 2>/dev/null; then
      systemctl stop prometheus
    else
      kill "$pid" 2>/dev/null || true
    fi
  done
  if [[ -n $(comm -13 <(echo "$before") <(pgrep -x prometheus | sort || true)) ]]; then
    echo "check-prometheus: a prometheus daemon started by the install is still running" >&2
    exit 1
  fi
}

if [[ ! -x /usr/bin/prometheus || ! -x /usr/bin/promtool ]] || ! python3 -c 'import yaml' 2>/dev/null; then
  install_prometheus
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The rules: the CR's spec as a plain rules file, beside copies of the unit tests.
python3 - deploy/monitoring/prometheusrule.yaml "$work/rules.yaml" <<'EOF'
import sys, yaml
with open(sys.argv[1]) as f:
    rule = yaml.safe_load(f)
with open(sys.argv[2], "w") as f:
    yaml.safe_dump({"groups": rule["spec"]["groups"]}, f, sort_keys=False, width=1000)
EOF
# (promtool resolves a test file's rule_files from the test file's folder.)
tests=()
for file in deploy/monitoring/tests/*.yaml; do
  cp "$file" "$work/" && tests+=("$work/${file##*/}")
done
promtool check rules "$work/rules.yaml"
promtool test rules "${tests[@]}"

# Every alert seen firing and not firing, every recording rule evaluated, in the unit tests.
python3 - "$work/rules.yaml" deploy/monitoring/tests/*.yaml <<'EOF'
import sys, yaml
with open(sys.argv[1]) as f:
    rules = [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]
firing, quiet, exprs = set(), set(), ""
for path in sys.argv[2:]:
    with open(path) as f:
        for test in yaml.safe_load(f).get("tests", []):
            for case in test.get("alert_rule_test", []):
                (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
            exprs += " ".join(c["expr"] for c in test.get("promql_expr_test", []))
missing = []
for r in rules:
    if "alert" in r:
        missing += [f"{r['alert']} is never seen {w}" for w, s in
                    (("firing", firing), ("not firing", quiet)) if r["alert"] not in s]
    elif r["record"] not in exprs:
        missing.append(f"recording rule {r['record']} has no promql_expr_test")
for m in missing:
    print(f"check-prometheus: deploy/monitoring/tests: {m}", file=sys.stderr)
sys.exit(1 if missing else 0)
EOF
echo "check-prometheus: every alert of deploy/monitoring seen firing and not firing"

# The live part.
test_binary=$build/tests/integration/plugin/integration_prometheus_test
if [[ ! -x $test_binary ]]; then
  cmake --build "$build" --target integration_prometheus_test -j 2
fi
log=$work/live.log
status=0
"$test_binary" 2>&1 | tee "$log" || status=$?
if grep -q '\[  SKIPPED \]' "$log"; then
  echo "check-prometheus: the live Prometheus test was skipped" >&2
  exit 1
fi
exit "$status"
