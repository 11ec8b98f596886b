#!/bin/bash
# The journal audit Job (deploy/audit, docs/audit.md). For each plugin pod: a consistent copy of
# its journal through `kubectl exec … journal copy --to -`, verified here, off the node, by this
# image's own binary against the node's previous anchor; the new head is then recorded as the
# node's anchor in ConfigMap $ANCHORS. A failed copy or check fails the Job (exit 1) and leaves
# that node's old anchor in place; the other nodes are still checked.
# Environment: NAMESPACE, ANCHORS (ConfigMap name), KUBECTL (its path), WORK (a writable folder).
set -u -o pipefail
ns=${NAMESPACE:-gpu-fabric-plugin}
cm=${ANCHORS:-gpu-fabric-journal-anchors}
work=${WORK:-/work}
selector='app.kubernetes.io/name in (gpu-fabric-plugin,gpu-fabric-plugin-dra)'
k() { "${KUBECTL:-kubectl}" -n "$ns" "$@"; }

k get configmap "$cm" >/dev/null 2>&1 || k create configmap "$cm" >/dev/null || exit 1
# One "NODE SEQ:HASH" line per node, read before any check.
anchors=$(k get configmap "$cm" \
  -o go-template='{{range $n, $a := .data}}{{$n}} {{$a}}{{"\n"}}{{end}}') || exit 1
pods=$(k get pods -l "$selector" \
  -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName}{"\n"}{end}') || exit 1
if [[ -z $pods ]]; then
  echo "no plugin pods ($selector): nothing was checked"
  exit 1
fi

check() {  # check POD NODE: 0 when the copy verified and the node's anchor moved to its head
  local pod=$1 node=$2 prev="" name anchor out rc word seq hash
  while read -r name anchor; do [[ $name == "$node" ]] && prev=$anchor; done <<<"$anchors"
  local copy=$work/$node.db
  rm -f "$copy"
  if ! k exec "$pod" -c gpu-fabric-plugin -- gpu-fabric-plugin journal copy --to - >"$copy"; then
    echo "$node: FAILED: no copy of the journal from pod $pod; anchor ${prev:-none} kept"
    return 1
  fi
  out=$(gpu-fabric-plugin journal verify --journal "$copy" ${prev:+--anchor "$prev"} 2>&1)
  rc=$?
  rm -f "$copy"
  echo "$node ($pod): $out"
  if ((rc != 0)); then
    echo "$node: FAILED: journal verify exited $rc; anchor ${prev:-none} kept"
    return 1
  fi
  read -r word seq hash <<<"${out##*$'\n'}"
  [[ $word == head ]] || { echo "$node: FAILED: verify printed no head line"; return 1; }
  k patch configmap "$cm" --type merge -p "{\"data\":{\"$node\":\"$seq:$hash\"}}" >/dev/null ||
    { echo "$node: FAILED: could not record anchor $seq:$hash"; return 1; }
  echo "$node: anchor $seq:$hash recorded (was ${prev:-none})"
}

failed=0
while read -r pod node; do
  check "$pod" "$node" || failed=1
done <<<"$pods"
exit $failed
