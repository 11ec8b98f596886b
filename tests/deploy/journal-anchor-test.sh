#!/usr/bin/env bash
# deploy/audit/journal-anchor.sh against stand-ins: a fake `kubectl` on PATH that lists two plugin
# pods, keeps the anchors ConfigMap in a file and answers `exec … journal copy --to -` by running
# the real binary on that pod's test journal (as the container would, GPU_FABRIC_JOURNAL set);
# the script's own `journal verify` is the real binary too. Checks: the first run records both
# nodes' heads; a grown journal passes its anchor and moves it; a cut history, a tampered event
# and a failed copy each fail the Job and keep that node's old anchor, while the other node is
# still checked.
#   tests/deploy/journal-anchor-test.sh BINARY FIXTURE_JOURNAL [SCRIPT]
set -euo pipefail
binary=$(realpath "$1")
fixture=$(realpath "$2")
script=$(realpath "${3:-$(dirname "$0")/../../deploy/audit/journal-anchor.sh}")
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/bin" "$fake/journals" "$fake/work"
ln -s "$binary" "$fake/bin/gpu-fabric-plugin"
printf 'plugin-a node-a\nplugin-b node-b\n' >"$fake/pods"

cat >"$fake/bin/kubectl" <<'EOF'
#!/usr/bin/env bash
# Fake kubectl: state under $FAKE (pods, anchors = the ConfigMap's "KEY VALUE" lines).
set -eu
echo "kubectl $*" >>"$FAKE/calls"
[[ $1 == -n && $2 == gpu-fabric-plugin ]] || { echo "fake kubectl: no -n gpu-fabric-plugin" >&2; exit 3; }
shift 2
case "$1 $2" in
  "get configmap")
    [[ -f $FAKE/anchors ]] || { echo 'Error from server (NotFound)' >&2; exit 1; }
    [[ " $* " == *" -o go-template="* ]] && cat "$FAKE/anchors"
    exit 0 ;;
  "create configmap") : >"$FAKE/anchors" ;;
  "get pods")
    [[ $3 == -l && $4 == 'app.kubernetes.io/name in (gpu-fabric-plugin,gpu-fabric-plugin-dra)' ]] ||
      { echo "fake kubectl: unexpected selector $3 $4" >&2; exit 3; }
    cat "$FAKE/pods" ;;
  "patch configmap")
    json=${*: -1}
    [[ $json =~ ^\{\"data\":\{\"([a-z0-9.-]+)\":\"([0-9]+:[0-9a-f]{64})\"\}\}$ ]] ||
      { echo "fake kubectl: bad patch $json" >&2; exit 3; }
    { grep -v "^${BASH_REMATCH[1]} " "$FAKE/anchors" || true; echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"; } >"$FAKE/anchors.new"
    mv "$FAKE/anchors.new" "$FAKE/anchors" ;;
  exec*)
    pod=$2
    [[ $3 == -c && $4 == gpu-fabric-plugin && $5 == -- ]] || { echo "fake kubectl: bad exec $*" >&2; exit 3; }
    shift 5
    [[ -f $FAKE/journals/$pod.db ]] || { echo "error: pod $pod not found" >&2; exit 1; }
    GPU_FABRIC_JOURNAL=$FAKE/journals/$pod.db exec "$@" ;;
  *) echo "fake kubectl: unexpected call $*" >&2; exit 3 ;;
esac
EOF
chmod +x "$fake/bin/kubectl"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run_job() {  # run_job: the script's exit code in $rc, its output in $fake/out
  rc=0
  env -i PATH="$fake/bin:/usr/bin:/bin" FAKE="$fake" NAMESPACE=gpu-fabric-plugin WORK="$fake/work" \
    KUBECTL="$fake/bin/kubectl" bash "$script" >"$fake/out" 2>&1 || rc=$?
}
anchor_of() { sed -n "s/^$1 //p" "$fake/anchors"; }
journal() {  # journal POD [SQL]: the pod's journal is the fixture, changed by SQL
  rm -f "$fake/journals/$1.db"*
  cp "$fixture" "$fake/journals/$1.db"
  [[ -z ${2:-} ]] || sqlite3 "$fake/journals/$1.db" "$2"
}
head_of() { "$binary" journal verify --journal "$1" | tail -n1 | { read -r _ s h; echo "$s:$h"; }; }
cut_to() { echo "DELETE FROM snapshots WHERE seq > $1; DELETE FROM events WHERE seq > $1;"; }

# 1. First run: no ConfigMap yet; both heads recorded.
journal plugin-a "$(cut_to 40)"
journal plugin-b
run_job
((rc == 0)) || fail "first run exited $rc: $(cat "$fake/out")"
a40=$(anchor_of node-a)
b43=$(anchor_of node-b)
[[ $a40 == "$(head_of "$fake/journals/plugin-a.db")" && $a40 == 40:* ]] || fail "node-a anchor $a40"
[[ $b43 == "$(head_of "$fake/journals/plugin-b.db")" && $b43 == 43:* ]] || fail "node-b anchor $b43"
[[ -z $(ls -A "$fake/work") ]] || fail "copies left in WORK: $(ls -A "$fake/work")"

# 2. node-a's journal grew: its anchor checks and moves to the new head.
journal plugin-a
run_job
((rc == 0)) || fail "grown journal: exited $rc: $(cat "$fake/out")"
grep -q "anchor seq 40 matches" "$fake/out" || fail "no anchor check in: $(cat "$fake/out")"
[[ $(anchor_of node-a) == 43:* ]] || fail "node-a anchor not moved: $(anchor_of node-a)"
a43=$(anchor_of node-a)

# 3. node-a's history was cut below its anchor: the Job fails, node-a's anchor is kept, node-b
#    is still checked.
journal plugin-a "$(cut_to 41)"
run_job
((rc == 1)) || fail "cut history: exited $rc: $(cat "$fake/out")"
grep -q "anchor check failed: event seq 43 no longer exists" "$fake/out" || fail "no anchor failure in: $(cat "$fake/out")"
grep -q "node-a: FAILED: journal verify exited 1; anchor $a43 kept" "$fake/out" || fail "no FAILED line in: $(cat "$fake/out")"
[[ $(anchor_of node-a) == "$a43" ]] || fail "node-a anchor changed on failure: $(anchor_of node-a)"
grep -q "node-b: anchor $b43 recorded" "$fake/out" || fail "node-b not checked: $(cat "$fake/out")"

# 4. A tampered event on node-a: the copy carries it, verify fails, the anchor stays.
journal plugin-a "UPDATE events SET time_us = time_us + 1 WHERE seq = 10"
run_job
((rc == 1)) || fail "tampered: exited $rc: $(cat "$fake/out")"
grep -q "is damaged at seq 10" "$fake/out" || fail "no damage report in: $(cat "$fake/out")"
[[ $(anchor_of node-a) == "$a43" ]] || fail "node-a anchor changed after tampering"

# 5. The copy itself fails (the pod's journal is gone): the Job fails, the anchor stays.
rm -f "$fake/journals/plugin-a.db"
run_job
((rc == 1)) || fail "failed copy: exited $rc: $(cat "$fake/out")"
grep -q "node-a: FAILED: no copy of the journal from pod plugin-a; anchor $a43 kept" "$fake/out" ||
  fail "no copy failure in: $(cat "$fake/out")"
[[ $(anchor_of node-a) == "$a43" ]] || fail "node-a anchor changed after a failed copy"

if ((failures)); then
  echo "journal-anchor-test: $failures failure(s)"
  exit 1
fi
echo "journal-anchor-test: deploy/audit/journal-anchor.sh passes, fails on a cut history, a tampered event and a failed copy, and keeps the old anchor"
