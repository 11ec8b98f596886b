// The `serve` flags as the binary describes them: names and env variables from `serve --help`
// (CLI11's "--name TYPE=default (Env:NAME)" lines); defaults from --help when it prints them,
// otherwise from the flag table of docs/operations.md (SPEC §2.1's table). Never from the
// manifests under test.

// CLI11 2.x prints "--name TEXT=default (Env:NAME)"; older ones "--name TEXT [default]".
const helpLine = /^\s+(--[a-z0-9-]+)(?:\s+[A-Z]+(?::\{[^}]*\})?(?:=(\S*))?)?(?:\s+\[([^\]]*)\])?(?:\s+\(Env:([A-Za-z0-9_]+)\))?/;

export function parseHelp(text) {
  const flags = new Map();
  for (const line of text.split("\n")) {
    const m = helpLine.exec(line);
    if (!m || m[1] === "--help") continue;
    const printed = m[2] ?? m[3];
    flags.set(m[1], { name: m[1], default: printed, env: m[4], defaultFrom: printed === undefined ? undefined : "--help" });
  }
  return flags;
}

// "| `--journal` [`GPU_FABRIC_JOURNAL`] | `/var/lib/…/journal.db` | …": the default is the second
// cell when it is one code span; "empty (off)" is the empty string; anything else is not a value.
export function addDocDefaults(flags, operationsMd) {
  for (const line of operationsMd.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4) continue;
    const name = /^`(--[a-z0-9-]+)`/.exec(cells[1]);
    if (!name || !flags.has(name[1])) continue;
    const flag = flags.get(name[1]);
    if (flag.default !== undefined) continue;
    const value = /^`([^`]*)`$/.exec(cells[2]);
    if (value) flag.default = value[1];
    else if (/^empty\b/.test(cells[2])) flag.default = "";
    if (flag.default !== undefined) flag.defaultFrom = "docs/operations.md";
  }
  return flags;
}

// Where each flag's value points on disk, for the mount checks: [path, how the plugin uses it].
// A path is "dir" when the plugin creates files in it (it must be writable), "file" or "socket"
// otherwise. Flags whose value is not a path here are left out.
export function pathsOf(flag, value) {
  if (value === undefined || value === "") return [];
  switch (flag) {
    case "--fm-address":
      return value.startsWith("/") ? [[value, "socket"]] : [];
    case "--fm-library":
      return value.includes("/") ? [[value, "file"]] : [];
    case "--pci-ids":
      return []; // inside the image
    case "--dev-root":
      return [[value, "dir-read"]]; // vfio/<group>, vfio/devices/, iommu
    case "--device-plugin-dir":
    case "--kubelet-registry-dir": // <driver>-reg.sock
    case "--kubelet-plugins-dir": // <driver>/dra.sock, device metadata files
    case "--cdi-dir": // the claims' CDI specs
      return [[value, "dir"]];
    case "--node-name":
    case "--dra-driver-name":
    case "--mode":
      return [];
    case "--journal":
    case "--node-labels-file":
      return [[value, "written-file"]];
    default:
      return value.startsWith("/") ? [[value, "file"]] : [];
  }
}

export function metricsPort(address) {
  const m = /^[^:]*:(\d+)$/.exec(address ?? "");
  return m ? Number(m[1]) : undefined;
}
