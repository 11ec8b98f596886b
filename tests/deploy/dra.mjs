// Checks of the DRA deployment (deploy/dra, SPEC §11) that a schema cannot make: the DaemonSet
// runs in dra mode beside no device-plugin mount, the admission policy and the RBAC binding name
// the DaemonSet's account, the DeviceClass selects the driver's GPUs, each claim template fm-Ngpu
// asks for N single GPUs of one partition of size N, and the VM example's GPUs name requests of
// the template its claim comes from. The schema of the resource.k8s.io/v1 objects is checked by
// tests/common/schema_check.py (scripts/check-deploy.sh).

// Kinds without a namespace. kustomize v2.0.3 puts a kustomization's `namespace:` on kinds it does
// not know, cluster-scoped or not, so a namespace here is a rendering mistake.
const clusterScoped = new Set(["Namespace", "ClusterRole", "ClusterRoleBinding", "DeviceClass",
  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]);

// Objects checked here (structure) and by schema_check.py (schema) rather than by schema.mjs.
export function validatedElsewhere(object) {
  if (object?.apiVersion === "resource.k8s.io/v1") return "resource.k8s.io/v1 schema: schema_check.py";
  if (object?.apiVersion === "kubevirt.io/v1" && object.kind === "VirtualMachine") return "structure only (dra.mjs)";
  return undefined;
}

export function isDraRender(objects) {
  return objects.some((o) => o.apiVersion?.startsWith("resource.k8s.io/") ||
    (o.kind === "ClusterRole" && (o.rules ?? []).some((r) => (r.resources ?? []).includes("resourceslices"))));
}

export function checkClusterScoped(o, problem) {
  if (clusterScoped.has(o.kind) && o.metadata?.namespace !== undefined) {
    problem(`is cluster-scoped but has namespace ${o.metadata.namespace}`);
  }
}

// The DaemonSet of a DRA render: dra mode, no device-plugin socket or PodResources mount, the
// node name from the downward API through an env the args really define.
export function checkDraDaemonSet(ds, container, values, problem) {
  if (values.get("--mode") !== "dra") {
    problem(`runs --mode=${values.get("--mode") ?? "(unset)"} in a DRA deployment; it must pass --mode=dra`);
  }
  for (const flag of ["--device-plugin-dir", "--pod-resources-socket"]) {
    const path = values.get(flag);
    const mount = (container.volumeMounts ?? []).find((m) => path && (path === m.mountPath || path.startsWith(`${m.mountPath}/`)));
    if (mount) problem(`mounts ${mount.mountPath} (${flag}) in dra mode, which serves no device-plugin socket`);
  }
  if (!values.get("--node-name")) problem("passes no --node-name (required with --mode=dra)");
  const env = new Set((container.env ?? []).map((e) => e.name));
  for (const arg of container.args ?? []) {
    for (const [, name] of arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
      if (!env.has(name)) problem(`argument ${arg} refers to $(${name}), which is not an env of the container`);
    }
  }
}

// The account the DaemonSet runs as is the one the binding grants and the policy restricts.
export function checkDraAccess(ds, objects, problem) {
  const ns = ds.metadata.namespace;
  const sa = ds.spec.template.spec.serviceAccountName;
  const user = `system:serviceaccount:${ns}:${sa}`;
  const bindings = objects.filter((o) => o.kind === "ClusterRoleBinding" &&
    (o.subjects ?? []).some((s) => s.kind === "ServiceAccount" && s.name === sa && s.namespace === ns));
  if (!bindings.length) problem(`no ClusterRoleBinding grants the service account ${ns}/${sa}`);
  const policies = objects.filter((o) => o.kind === "ValidatingAdmissionPolicy" &&
    (o.spec?.matchConstraints?.resourceRules ?? []).some((r) => (r.resources ?? []).includes("resourceslices")));
  if (!policies.length) problem("no ValidatingAdmissionPolicy guards resourceslices");
  for (const p of policies) {
    // The user name as a whole CEL string literal (a prefix of another account's name is not it).
    const conditions = (p.spec.matchConditions ?? []).map((c) => c.expression ?? "").join("\n");
    if (!conditions.includes(`"${user}"`) && !conditions.includes(`'${user}'`)) {
      problem(`ValidatingAdmissionPolicy ${p.metadata.name} does not match the user ${user}`);
    }
    if (!JSON.stringify(p.spec.variables ?? []).includes("authentication.kubernetes.io/node-name")) {
      problem(`ValidatingAdmissionPolicy ${p.metadata.name} does not read the token's node name`);
    }
    const bound = objects.some((b) => b.kind === "ValidatingAdmissionPolicyBinding" && b.spec?.policyName === p.metadata.name &&
      (b.spec.validationActions ?? []).includes("Deny"));
    if (!bound) problem(`ValidatingAdmissionPolicy ${p.metadata.name} has no binding that denies`);
  }
}

export function checkDeviceClass(dc, driver, problem) {
  if (dc.metadata.name !== `vfio-gpu.${driver}`) problem(`is not named vfio-gpu.${driver}`);
  const cel = (dc.spec?.selectors ?? []).map((s) => s.cel?.expression ?? "").join(" && ").replace(/\s+/g, " ");
  for (const term of [`device.driver == "${driver}"`, `device.attributes["${driver}"].type == "vfio-gpu"`]) {
    if (!cel.includes(term)) problem(`selector does not say ${term} (CEL: ${cel || "none"})`);
  }
}

// fm-Ngpu: requests gpu0 … gpu<N-1>, each exactly one device of vfio-gpu.<driver>, and one
// constraint over all of them on <driver>/partition<N>.
export function checkClaimTemplate(t, driver, problem) {
  const m = /^fm-(\d+)gpu$/.exec(t.metadata.name);
  if (!m) return problem("is not named fm-<N>gpu");
  const n = Number(m[1]);
  const devices = t.spec?.spec?.devices ?? {};
  const requests = devices.requests ?? [];
  const names = requests.map((r) => r.name);
  const want = Array.from({ length: n }, (_, i) => `gpu${i}`);
  if (names.join(",") !== want.join(",")) problem(`has requests [${names}], not the ${n} requests [${want}]`);
  for (const r of requests) {
    const e = r.exactly ?? {};
    if (e.deviceClassName !== `vfio-gpu.${driver}` || e.allocationMode !== "ExactCount" || e.count !== 1) {
      problem(`request ${r.name} is not exactly one device of vfio-gpu.${driver} (${JSON.stringify(e)})`);
    }
  }
  const constraints = devices.constraints ?? [];
  if (constraints.length !== 1) return problem(`has ${constraints.length} constraints, not one`);
  const c = constraints[0];
  const covered = [...(c.requests ?? [])].sort().join(",");
  if (covered !== [...names].sort().join(",")) problem(`constraint covers requests [${c.requests ?? []}], not its requests [${names}]`);
  if (c.matchAttribute !== `${driver}/partition${n}`) problem(`constraint matches ${c.matchAttribute}, not ${driver}/partition${n}`);
}

// Each GPU of the VM names a claim of the VM made from a template of the render, and a request
// of that template; no request is used twice (KubeVirt takes one device per request).
export function checkVirtualMachine(vm, templates, problem) {
  const spec = vm.spec?.template?.spec ?? {};
  const claims = new Map((spec.resourceClaims ?? []).map((c) => [c.name, c]));
  const seen = new Set();
  for (const gpu of spec.domain?.devices?.gpus ?? []) {
    const ref = gpu.claimRequest;
    if (!ref) continue;
    const claim = claims.get(ref.claimName);
    if (!claim) {
      problem(`gpu ${gpu.name} names claim ${ref.claimName}, which is not in spec.template.spec.resourceClaims`);
      continue;
    }
    const template = templates.find((t) => t.metadata.name === claim.resourceClaimTemplateName);
    if (!template) {
      problem(`claim ${claim.name} comes from template ${claim.resourceClaimTemplateName}, which is not rendered with it`);
      continue;
    }
    const names = (template.spec?.spec?.devices?.requests ?? []).map((r) => r.name);
    if (!names.includes(ref.requestName)) {
      problem(`gpu ${gpu.name} names request ${ref.requestName}, which template ${template.metadata.name} does not have ([${names}])`);
    }
    const key = `${ref.claimName}/${ref.requestName}`;
    if (seen.has(key)) problem(`request ${key} is given to two GPUs`);
    seen.add(key);
  }
  if (!seen.size) problem("has no GPU with a claimRequest");
}
