// The metric names alerts and dashboards may use, and the names a PromQL expression uses.

// SPEC §8.1's table, used only while docs/metrics.md (which documents the same table) is absent.
const specMetrics = {
  gpu_fabric_build_info: "gauge",
  gpu_fabric_devices: "gauge",
  gpu_fabric_allocations_total: "counter",
  gpu_fabric_allocate_seconds: "histogram",
  gpu_fabric_partition_operations_total: "counter",
  gpu_fabric_partitions_active: "gauge",
  gpu_fabric_partitions_free: "gauge",
  gpu_fabric_fabric_manager_up: "gauge",
  gpu_fabric_drift_total: "counter",
  gpu_fabric_journal_last_seq: "gauge",
  gpu_fabric_journal_first_damaged_seq: "gauge",
  gpu_fabric_journal_append_seconds: "histogram",
  gpu_fabric_reconcile_seconds: "histogram",
  gpu_fabric_pod_resources_errors_total: "counter",
};

// Not the plugin's: Prometheus's own scrape health and kube-state-metrics' pod readiness.
export const externalMetrics = new Set(["up", "kube_pod_status_ready"]);

// Table rows of docs/metrics.md naming a metric (`gpu_fabric_…`, first code span) and its type,
// when that file exists and has such rows.
function metricsTable(metricsMd) {
  const table = {};
  for (const line of (metricsMd ?? "").split("\n")) {
    if (!line.startsWith("|")) continue;
    const name = /`(gpu_fabric_[a-z0-9_]+)`/.exec(line);
    const type = /\|\s*`?(gauge|counter|histogram)\b/.exec(line);
    if (name && type) table[name[1]] = type[1];
  }
  return table;
}

export function pluginMetrics(metricsMd) {
  let table = metricsTable(metricsMd);
  let source = "docs/metrics.md";
  if (Object.keys(table).length === 0) {
    table = specMetrics;
    source = `the list in tests/deploy/metrics.mjs (SPEC §8.1; docs/metrics.md ${metricsMd === undefined ? "absent" : "has no metric table"})`;
  }
  const names = new Set();
  for (const [name, type] of Object.entries(table)) {
    names.add(name);
    if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
  }
  return { names, source };
}

const keywords = new Set([
  "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
  "and", "or", "unless", "inf", "nan",
]);

// Identifiers of an expression that name series: label matchers, strings, ranges, grouping
// clauses, Grafana variables and function calls are taken out first.
export function metricNames(expr) {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, " ")
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, " ");
  const names = new Set();
  for (const m of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const rest = stripped.slice(m.index + m[0].length);
    if (/^\s*\(/.test(rest) || keywords.has(m[0].toLowerCase())) continue;
    if (/^\d/.test(stripped[m.index - 1] ?? "")) continue; // a duration or number suffix
    names.add(m[0]);
  }
  return names;
}

// Grafana's label_values(metric, label) template query.
export function templateMetricNames(query) {
  const m = /label_values\(\s*([^,)]+)/.exec(query);
  return m ? metricNames(m[1]) : new Set();
}
