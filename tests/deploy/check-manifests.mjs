// scripts/check-deploy.sh's checks on rendered kustomizations (see that script for the whole).
//   node check-manifests.mjs --help-file F --operations-md F [--metrics-md F] --dashboard F \
//        NAME=RENDERED.yaml...
// Prints each problem as "NAME: kind/name: what" and exits 1 when there is any.
import fs from "node:fs";
import YAML from "yaml";
import { parseHelp, addDocDefaults } from "./flags.mjs";
import { validateObject } from "./schema.mjs";
import { checkDaemonSet } from "./daemonset.mjs";
import * as dra from "./dra.mjs";
import { checkAuditCronJob, pluginNodeLabels } from "./audit.mjs";
import { pluginMetrics, externalMetrics, metricNames, templateMetricNames } from "./metrics.mjs";

function parseArgs(argv) {
  const options = { renders: [] };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) options[argv[i].slice(2)] = argv[++i];
    else {
      const [name, file] = argv[i].split("=");
      options.renders.push({ name, file });
    }
  }
  return options;
}

let problems = 0;
const reporter = (where) => (what) => {
  console.error(`${where}: ${what}`);
  problems++;
};

function loadObjects(file, problem) {
  const objects = [];
  for (const doc of YAML.parseAllDocuments(fs.readFileSync(file, "utf8"))) {
    if (doc.errors.length) problem(`YAML: ${doc.errors[0].message}`);
    else if (doc.contents !== null) objects.push(doc.toJS());
  }
  return objects;
}

function checkMetricUse(where, exprs, allowed) {
  for (const [what, names] of exprs) {
    for (const name of names) {
      if (!allowed.names.has(name) && !externalMetrics.has(name)) {
        reporter(where)(`${what} uses ${name}, which is not a metric of ${allowed.source}`);
      }
    }
  }
}

function checkRule(where, rule, allowed) {
  const exprs = [];
  for (const group of rule.spec.groups) {
    for (const r of group.rules) {
      exprs.push([`alert ${r.alert ?? r.record}`, metricNames(String(r.expr))]);
      if (r.alert && !r.labels?.severity) reporter(where)(`alert ${r.alert} has no severity label`);
      if (r.alert && !r.annotations?.summary) reporter(where)(`alert ${r.alert} has no summary`);
    }
  }
  checkMetricUse(where, exprs, allowed);
}

function checkDashboard(where, text, allowed) {
  const problem = reporter(where);
  let dash;
  try {
    dash = JSON.parse(text);
  } catch (error) {
    return problem(`not JSON: ${error.message}`);
  }
  const vars = dash.templating?.list ?? [];
  const dsVar = vars.find((v) => v.type === "datasource" && v.query === "prometheus");
  if (!dsVar) return problem("no datasource variable of type prometheus in templating");
  const dsRef = (ds) => ds?.uid === `\${${dsVar.name}}`;
  const ids = new Set();
  const exprs = [];
  for (const v of vars.filter((v) => v.type === "query")) {
    if (!dsRef(v.datasource)) problem(`variable ${v.name} does not use $${dsVar.name}`);
    exprs.push([`variable ${v.name}`, templateMetricNames(v.query?.query ?? v.query ?? "")]);
  }
  for (const p of dash.panels ?? []) {
    if (ids.has(p.id)) problem(`panel id ${p.id} is used twice`);
    ids.add(p.id);
    if (!dsRef(p.datasource)) problem(`panel "${p.title}" does not use $${dsVar.name}`);
    if (!p.gridPos) problem(`panel "${p.title}" has no gridPos`);
    for (const t of p.targets ?? []) {
      if (!dsRef(t.datasource)) problem(`panel "${p.title}" target ${t.refId} does not use $${dsVar.name}`);
      exprs.push([`panel "${p.title}"`, metricNames(t.expr ?? "")]);
    }
  }
  checkMetricUse(where, exprs, allowed);
}

// The init container's script comes from a rendered ConfigMap through a mount.
function checkInitScripts(ds, objects, problem) {
  const spec = ds.spec.template.spec;
  for (const c of spec.initContainers ?? []) {
    const script = (c.command ?? []).find((a) => a.endsWith(".sh"));
    const mount = (c.volumeMounts ?? []).find((m) => script?.startsWith(`${m.mountPath}/`));
    const volume = spec.volumes.find((v) => v.name === mount?.name);
    const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === volume?.configMap?.name);
    const key = script?.slice(mount?.mountPath.length + 1);
    if (!cm?.data?.[key]) {
      problem(`init container ${c.name}: ${script ?? "(no .sh in its command)"} is in no rendered ConfigMap`);
      continue;
    }
    for (const e of c.env ?? []) {
      if (!cm.data[key].includes(e.name)) problem(`init container ${c.name}: env ${e.name} is not read by ${key}`);
    }
  }
}

function checkServices(where, objects, allServices, ds) {
  const problem = reporter(where);
  const labels = ds?.spec.template.metadata.labels ?? {};
  const container = ds?.spec.template.spec.containers.find((c) => c.name === "gpu-fabric-plugin");
  for (const svc of objects.filter((o) => o.kind === "Service")) {
    if (!Object.entries(svc.spec.selector ?? {}).every(([k, v]) => labels[k] === v)) {
      problem(`Service ${svc.metadata.name} does not select the DaemonSet's pods`);
    }
    for (const port of svc.spec.ports) {
      const target = port.targetPort ?? port.port;
      const cp = (container?.ports ?? []).find((p) => p.name === target || p.containerPort === target);
      if (!cp) problem(`Service ${svc.metadata.name} port ${port.name} targets ${target}, no port of the container`);
    }
  }
  // The NetworkPolicy must select the pods and admit the metrics port, or it cuts Prometheus off.
  for (const np of objects.filter((o) => o.kind === "NetworkPolicy")) {
    if (!Object.entries(np.spec.podSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v)) {
      problem(`NetworkPolicy ${np.metadata.name} does not select the DaemonSet's pods`);
    }
    for (const rule of np.spec.ingress ?? []) {
      for (const port of rule.ports ?? []) {
        const cp = (container?.ports ?? []).find((p) => p.name === port.port || p.containerPort === port.port);
        if (!cp) problem(`NetworkPolicy ${np.metadata.name} admits port ${port.port}, no port of the container`);
      }
    }
  }
  for (const sm of objects.filter((o) => o.kind === "ServiceMonitor")) {
    const match = sm.spec.selector.matchLabels ?? {};
    const svc = allServices.find((s) => Object.entries(match).every(([k, v]) => s.metadata.labels?.[k] === v));
    if (!svc) problem(`ServiceMonitor ${sm.metadata.name} selects no Service of the base`);
    for (const ep of sm.spec.endpoints) {
      if (svc && !svc.spec.ports.some((p) => p.name === ep.port)) problem(`ServiceMonitor endpoint port ${ep.port} is not a port of ${svc.metadata.name}`);
    }
  }
}

// The DeviceClass, claim templates and VM examples of a render, against the driver name of its
// DaemonSet (or the --dra-driver-name default where the render has none).
function checkDraObjects(name, objects, driver) {
  const templates = objects.filter((o) => o.kind === "ResourceClaimTemplate");
  for (const o of objects) {
    const problem = reporter(`${name}: ${o.kind}/${o.metadata?.name}`);
    const draKind = ["DeviceClass", "ResourceClaimTemplate"].includes(o.kind);
    if (draKind && !driver) {
      problem("`serve --help` has no --dra-driver-name default to check it against");
      continue;
    }
    if (o.kind === "DeviceClass") dra.checkDeviceClass(o, driver, problem);
    if (o.kind === "ResourceClaimTemplate") dra.checkClaimTemplate(o, driver, problem);
    if (o.kind === "VirtualMachine") dra.checkVirtualMachine(o, templates, problem);
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const flags = addDocDefaults(parseHelp(fs.readFileSync(options["help-file"], "utf8")), fs.readFileSync(options["operations-md"], "utf8"));
  const metricsMd = options["metrics-md"] && fs.existsSync(options["metrics-md"]) ? fs.readFileSync(options["metrics-md"], "utf8") : undefined;
  const allowed = pluginMetrics(metricsMd);
  console.log(`flags: ${flags.size} from --help, defaults from ${[...new Set([...flags.values()].map((f) => f.defaultFrom ?? "nowhere"))].join(", ")}; metrics from ${allowed.source}`);
  const rendered = options.renders.map(({ name, file }) => ({ name, objects: loadObjects(file, reporter(name)) }));
  const allServices = rendered.flatMap((r) => r.objects.filter((o) => o.kind === "Service"));
  const nodeLabels = pluginNodeLabels(rendered.flatMap((r) => r.objects.filter((o) => o.kind === "DaemonSet")));
  for (const { name, objects } of rendered) {
    const daemonSets = objects.filter((o) => o.kind === "DaemonSet");
    const draRender = dra.isDraRender(objects);
    let driver = flags.get("--dra-driver-name")?.default;
    for (const o of objects) {
      const where = `${name}: ${o.kind}/${o.metadata?.name}`;
      const elsewhere = dra.validatedElsewhere(o);
      if (!elsewhere) for (const p of await validateObject(o)) reporter(where)(p);
      dra.checkClusterScoped(o, reporter(where));
      if (o.kind === "DaemonSet") {
        const checked = checkDaemonSet(o, flags, reporter(where));
        checkInitScripts(o, objects, reporter(where));
        if (draRender && checked) {
          dra.checkDraDaemonSet(o, checked.container, checked.values, reporter(where));
          dra.checkDraAccess(o, objects, reporter(where));
          driver = checked.values.get("--dra-driver-name") ?? driver;
        }
      }
      if (o.kind === "CronJob") checkAuditCronJob(o, objects, nodeLabels, reporter(where));
      if (o.kind === "PrometheusRule") checkRule(where, o, allowed);
      if (o.kind === "ConfigMap" && o.data?.["dashboard.json"]) checkDashboard(where, o.data["dashboard.json"], allowed);
    }
    checkDraObjects(name, objects, driver);
    checkServices(name, objects, allServices, daemonSets[0]);
    console.log(`${name}: ${objects.length} objects (${objects.map((o) => o.kind).join(", ")})`);
  }
  if (options.dashboard) checkDashboard(options.dashboard, fs.readFileSync(options.dashboard, "utf8"), allowed);
  if (problems) {
    console.error(`${problems} problem(s)`);
    process.exit(1);
  }
}

await main();
