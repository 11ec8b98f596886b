// Checks the plugin's DaemonSet against the `serve` flags (flags.mjs): every env it sets is a
// flag's env, every path the plugin will use (a flag's default or its env value) lies on a mount
// that is writable where the plugin writes, every mount serves one of those paths, and the probes
// and ports agree with the metrics address.
import { pathsOf, metricsPort } from "./flags.mjs";

// Env that is not a flag: the node's name for the logs, from the downward API.
const nonFlagEnv = new Set(["NODE_NAME"]);
// Mounts that serve no flag: scratch space for the read-only root filesystem.
const scratchMounts = new Set(["/tmp"]);

const under = (path, dir) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

function effectiveValues(container, flags, problem) {
  const env = new Map();
  for (const e of container.env ?? []) {
    if (nonFlagEnv.has(e.name)) continue;
    if (![...flags.values()].some((f) => f.env === e.name)) {
      problem(`env ${e.name} is not the env of any flag of \`serve --help\``);
    } else if (e.value === undefined) {
      problem(`env ${e.name} has no literal value (the check cannot follow valueFrom)`);
    }
    env.set(e.name, e.value);
  }
  const args = container.args ?? [];
  if (args[0] !== "serve") problem(`args ${JSON.stringify(args)} do not start with "serve"`);
  const values = new Map();
  for (const flag of flags.values()) {
    values.set(flag.name, flag.env && env.has(flag.env) ? env.get(flag.env) : flag.default);
  }
  for (const arg of args.slice(1)) {
    const m = /^(--[a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (!m || !flags.has(m[1])) problem(`argument ${arg} is not a flag of \`serve --help\``);
    else values.set(m[1], m[2] ?? "true");
  }
  return values;
}

// Flags that only one --mode reads (SPEC §2.1, §11): their paths need a mount only in that mode.
const modeOnly = new Map([
  ["--device-plugin-dir", "device-plugin"], ["--pod-resources-socket", "device-plugin"],
  ["--kubelet-registry-dir", "dra"], ["--kubelet-plugins-dir", "dra"], ["--cdi-dir", "dra"],
  ["--kubeconfig", "dra"],
]);

function checkMounts(container, values, flags, problem) {
  const mounts = container.volumeMounts ?? [];
  const used = new Set();
  const mode = values.get("--mode") ?? "device-plugin";
  for (const [flag, value] of values) {
    if (value === undefined && flags.get(flag).defaultFrom === undefined) continue;
    if (modeOnly.has(flag) && modeOnly.get(flag) !== mode) continue;
    for (const [path, use] of pathsOf(flag, value)) {
      const mount = mounts
        .filter((m) => under(path, m.mountPath))
        .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
      if (!mount) {
        problem(`${flag}=${value}: ${path} is on no volume mount of the container`);
        continue;
      }
      used.add(mount.mountPath);
      const writes = use === "dir" || use === "written-file";
      if (writes && mount.readOnly) problem(`${flag}: ${path} is written by the plugin but mount ${mount.mountPath} is readOnly`);
    }
  }
  for (const m of mounts) {
    if (!used.has(m.mountPath) && !scratchMounts.has(m.mountPath)) {
      problem(`mount ${m.mountPath} (volume ${m.name}) serves no flag default or env value`);
    }
  }
}

function containerPort(container, port) {
  if (typeof port === "number") return port;
  return (container.ports ?? []).find((p) => p.name === port)?.containerPort;
}

function checkProbes(container, values, hostNetwork, problem) {
  const address = values.get("--metrics-address");
  const port = metricsPort(address);
  if (port === undefined) {
    problem(`--metrics-address is "${address ?? ""}": no HOST:PORT, so no /healthz or /readyz to probe`);
    return;
  }
  const expected = { startupProbe: "/healthz", livenessProbe: "/healthz", readinessProbe: "/readyz" };
  for (const [probe, path] of Object.entries(expected)) {
    const get = container[probe]?.httpGet;
    if (!get) problem(`${probe} is not an httpGet on ${path}`);
    else if (get.path !== path) problem(`${probe} probes ${get.path}, not ${path}`);
    else if (containerPort(container, get.port) !== port) {
      problem(`${probe} port ${get.port} is not the metrics address's port ${port}`);
    }
  }
  const fm = values.get("--fm-address") ?? "";
  if (/^127\./.test(fm) && !hostNetwork) {
    problem(`--fm-address=${fm} is the host's loopback: it needs hostNetwork: true`);
  }
}

export function checkDaemonSet(ds, flags, problem) {
  const spec = ds.spec.template.spec;
  const container = spec.containers.find((c) => c.name === "gpu-fabric-plugin");
  if (!container) return problem("no container named gpu-fabric-plugin");
  const values = effectiveValues(container, flags, problem);
  checkMounts(container, values, flags, problem);
  checkProbes(container, values, spec.hostNetwork === true, problem);
  if (values.get("--node-labels-file") && !/^(1|true|t)$/i.test(values.get("--fabric-manager") ?? "")) {
    problem("--node-labels-file is set without --fabric-manager (a start-up error)");
  }
  const nodeName = (container.env ?? []).find((e) => e.name === "NODE_NAME");
  if (nodeName?.valueFrom?.fieldRef?.fieldPath !== "spec.nodeName") {
    problem("NODE_NAME is not taken from the downward API's spec.nodeName");
  }
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    for (const m of c.volumeMounts ?? []) {
      if (!(spec.volumes ?? []).some((v) => v.name === m.name)) problem(`${c.name}: mount of unknown volume ${m.name}`);
    }
  }
  return { container, values };
}
