// deploy/audit's CronJob (docs/audit.md): a hardened pod, its script in a rendered ConfigMap, and
// kept off every node a plugin DaemonSet of the check may run on.

// (key, value) pairs that put a node under a DaemonSet: its nodeSelector and the `In` expressions
// of its required node affinity.
export function pluginNodeLabels(daemonSets) {
  const labels = [];
  for (const ds of daemonSets) {
    const spec = ds.spec.template.spec;
    for (const [key, value] of Object.entries(spec.nodeSelector ?? {})) labels.push([key, value]);
    const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    for (const term of terms) {
      for (const e of term.matchExpressions ?? []) {
        if (e.operator === "In") for (const value of e.values) labels.push([e.key, value]);
      }
    }
  }
  return labels;
}

function checkHardening(spec, problem) {
  const pod = spec.securityContext ?? {};
  if (pod.runAsNonRoot !== true) problem("pod securityContext.runAsNonRoot is not true");
  if (pod.seccompProfile?.type !== "RuntimeDefault") problem("pod seccompProfile is not RuntimeDefault");
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    const sc = c.securityContext ?? {};
    if (sc.readOnlyRootFilesystem !== true) problem(`container ${c.name}: root filesystem is not read-only`);
    if (sc.allowPrivilegeEscalation !== false) problem(`container ${c.name}: allowPrivilegeEscalation is not false`);
    if (!(sc.capabilities?.drop ?? []).includes("ALL")) problem(`container ${c.name}: does not drop ALL capabilities`);
    if (!c.resources?.requests || !c.resources?.limits?.memory) problem(`container ${c.name}: no resource requests or memory limit`);
  }
}

function checkScript(spec, objects, problem) {
  for (const c of spec.containers) {
    const script = (c.command ?? []).find((a) => a.endsWith(".sh"));
    const mount = (c.volumeMounts ?? []).find((m) => script?.startsWith(`${m.mountPath}/`));
    const volume = (spec.volumes ?? []).find((v) => v.name === mount?.name);
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === volume?.configMap?.name);
    if (!cm?.data?.[script?.slice(mount.mountPath.length + 1)]) {
      problem(`container ${c.name}: ${script ?? "(no .sh in its command)"} is in no rendered ConfigMap`);
    }
  }
}

export function checkAuditCronJob(cronJob, objects, nodeLabels, problem) {
  const spec = cronJob.spec.jobTemplate.spec.template.spec;
  checkHardening(spec, problem);
  checkScript(spec, objects, problem);
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const avoids = ([key, value]) =>
    terms.length > 0 &&
    terms.every((t) => (t.matchExpressions ?? []).some((e) => e.key === key && e.operator === "NotIn" && e.values.includes(value)));
  for (const label of nodeLabels) {
    if (!avoids(label)) problem(`the audit pod may run on nodes labelled ${label[0]}=${label[1]}, where the plugin runs`);
  }
}
