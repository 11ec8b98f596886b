#!/usr/bin/env python3
"""Translates the rendered DaemonSet (`kubectl kustomize deploy/base`) into `podman run` flags, so
scripts/test-image.sh runs the image exactly as the manifest says, not as a hand-written copy.

  daemonset_to_podman.py RENDERED image
  daemonset_to_podman.py RENDERED grace                      terminationGracePeriodSeconds
  daemonset_to_podman.py RENDERED env NAME                   a container env value
  daemonset_to_podman.py RENDERED flag NAME DEFAULT          flag --NAME's value in the container's args
  daemonset_to_podman.py RENDERED probes                     lines: kind path port
  daemonset_to_podman.py RENDERED to-host --root R PATH      a container path on the simulated host
  daemonset_to_podman.py RENDERED run --root R --node-name N [--init NAME] [--sabotage libnvfm]
                                           [--extra=FLAG]...
      NUL-separated podman run arguments (options, image, then command and args) for the main
      container (or the init container NAME); hostPath volumes become bind mounts of R/<hostPath>
      after kubelet's type check (Directory/File must exist, DirectoryOrCreate is created),
      configMap volumes are written under R/.configmaps/, emptyDir becomes a tmpfs.

Anything in the manifest this does not know how to translate is an error (exit 2), so a new
setting cannot be silently dropped from the test.
"""
import argparse
import json
import os
import sys

import yaml


def die(message):
    print(f"daemonset_to_podman: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    daemonsets = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(daemonsets) != 1:
        die(f"{path}: expected one DaemonSet, found {len(daemonsets)}")
    config_maps = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "ConfigMap"}
    return daemonsets[0], config_maps


def pod_spec(ds):
    return ds["spec"]["template"]["spec"]


def main_container(ds):
    containers = pod_spec(ds)["containers"]
    if len(containers) != 1:
        die(f"expected one container, found {len(containers)}")
    return containers[0]


def init_container(ds, name):
    for c in pod_spec(ds).get("initContainers", []):
        if c["name"] == name:
            return c
    die(f"no init container {name}")


def volumes(ds):
    return {v["name"]: v for v in pod_spec(ds).get("volumes", [])}


def host_path_of(ds, container, path):
    """The simulated host's path (relative to the root) behind container `path`, by the longest
    mount prefix; None when no hostPath volume serves it."""
    best = None
    for m in container.get("volumeMounts", []):
        mp = m["mountPath"].rstrip("/") or "/"
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best[0]):
                best = (mp, m)
    if best is None:
        return None
    mp, m = best
    volume = volumes(ds)[m["name"]]
    if "hostPath" not in volume:
        return None
    return volume["hostPath"]["path"] + path[len(mp):]


def security_flags(pod_sc, sc):
    flags = []
    known_pod = {"runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile", "fsGroup",
                 "supplementalGroups"}
    known = {"runAsUser", "runAsGroup", "runAsNonRoot", "seccompProfile", "privileged",
             "allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities"}
    for k in pod_sc:
        if k not in known_pod:
            die(f"pod securityContext.{k} is not translated")
    for k in sc:
        if k not in known:
            die(f"container securityContext.{k} is not translated")
    merged = {**pod_sc, **sc}  # the container's settings win, as in Kubernetes
    if merged.get("privileged"):
        flags.append("--privileged")
    user = merged.get("runAsUser")
    if user is not None:
        group = merged.get("runAsGroup")
        flags.append(f"--user={user}" + (f":{group}" if group is not None else ""))
    if merged.get("runAsNonRoot") and user == 0:
        die("runAsNonRoot with runAsUser 0")
    for g in pod_sc.get("supplementalGroups", []):
        flags.append(f"--group-add={g}")
    if "fsGroup" in pod_sc:
        die("fsGroup is not translated")
    seccomp = merged.get("seccompProfile", {}).get("type", "Unconfined")
    if seccomp == "RuntimeDefault":
        # podman's default profile is the runtime's default (/usr/share/containers/seccomp.json).
        pass
    elif seccomp == "Unconfined":
        flags.append("--security-opt=seccomp=unconfined")
    else:
        die(f"seccompProfile {seccomp} is not translated")
    if merged.get("allowPrivilegeEscalation") is False:
        flags.append("--security-opt=no-new-privileges")
    if merged.get("readOnlyRootFilesystem"):
        # Kubernetes mounts no tmpfs of its own on a read-only root (podman would on /run, /tmp).
        flags += ["--read-only", "--read-only-tmpfs=false"]
    caps = merged.get("capabilities", {})
    for cap in caps.get("drop", []):
        flags.append(f"--cap-drop={cap}")
    for cap in caps.get("add", []):
        flags.append(f"--cap-add={cap}")
    return flags


def memory_flag(quantity):
    units = {"Ki": "k", "Mi": "m", "Gi": "g"}
    for suffix, unit in units.items():
        if quantity.endswith(suffix):
            return f"--memory={quantity[:-2]}{unit}"
    if quantity.isdigit():
        return f"--memory={quantity}b"
    die(f"memory quantity {quantity} is not translated")


def mount_flags(ds, config_maps, container, root, sabotage):
    flags = []
    vols = volumes(ds)
    nvfm_path = env_of(container).get("NVFM_LIBRARY_PATH")
    for m in container.get("volumeMounts", []):
        for k in m:
            if k not in {"name", "mountPath", "readOnly"}:
                die(f"volumeMount.{k} ({m['name']}) is not translated")
        target = m["mountPath"]
        if sabotage == "libnvfm" and target == nvfm_path:
            target = os.path.join(os.path.dirname(target) + "-elsewhere", os.path.basename(target))
        ro = ",ro" if m.get("readOnly") else ""
        v = vols.get(m["name"]) or die(f"volumeMount {m['name']} names no volume")
        if "hostPath" in v:
            hp = v["hostPath"]
            source = os.path.join(root, hp["path"].lstrip("/"))
            kind = hp.get("type", "")
            if kind == "DirectoryOrCreate":
                os.makedirs(source, mode=0o755, exist_ok=True)
            elif kind == "Directory":
                if not os.path.isdir(source):
                    die(f"hostPath type check failed: {hp['path']} is not a directory "
                        f"(volume {m['name']}, looked at {source})")
            elif kind == "File":
                if not os.path.isfile(source):
                    die(f"hostPath type check failed: {hp['path']} is not a file "
                        f"(volume {m['name']}, looked at {source})")
            elif kind == "":
                pass
            else:
                die(f"hostPath type {kind} is not translated")
            flags.append(f"--volume={source}:{target}:rbind{ro}")
        elif "configMap" in v:
            name = v["configMap"]["name"]
            cm = config_maps.get(name) or die(f"configMap {name} is not in the rendered output")
            folder = os.path.join(root, ".configmaps", name)
            os.makedirs(folder, exist_ok=True)
            mode = v["configMap"].get("defaultMode", 0o644)
            for key, value in cm.get("data", {}).items():
                path = os.path.join(folder, key)
                with open(path, "w") as f:
                    f.write(value)
                os.chmod(path, mode)
            flags.append(f"--volume={folder}:{target}:rbind,ro")
        elif "emptyDir" in v:
            ed = v["emptyDir"] or {}
            if ed.get("medium") == "Memory":
                size = ed.get("sizeLimit")
                opts = "rw"
                if size:
                    opts += ",size=" + memory_flag(size).split("=", 1)[1]
                flags.append(f"--tmpfs={target}:{opts}")
            else:
                folder = os.path.join(root, ".emptydirs", m["name"])
                os.makedirs(folder, exist_ok=True)
                flags.append(f"--volume={folder}:{target}:rbind{ro}")
        else:
            die(f"volume {m['name']}: only hostPath, configMap and emptyDir are translated")
    return flags


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def env_flags(container, node_name):
    flags = []
    for e in container.get("env", []):
        if "value" in e:
            flags.append(f"--env={e['name']}={e['value']}")
        elif e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName":
            flags.append(f"--env={e['name']}={node_name}")
        else:
            die(f"env {e['name']}: only values and fieldRef spec.nodeName are translated")
    if container.get("envFrom"):
        die("envFrom is not translated")
    return flags


def run_args(ds, config_maps, root, node_name, init, sabotage, extra):
    spec = pod_spec(ds)
    c = init_container(ds, init) if init else main_container(ds)
    known = {"name", "image", "command", "args", "env", "securityContext", "resources",
             "volumeMounts", "ports", "startupProbe", "livenessProbe", "readinessProbe",
             "imagePullPolicy", "terminationMessagePolicy"}
    for k in c:
        if k not in known:
            die(f"container {c['name']}: {k} is not translated")
    flags = [f"--hostname={node_name}"]
    if spec.get("hostNetwork"):
        flags.append("--network=host")
    else:
        # The pod's own network namespace; the plugin talks to kubelet and FM over Unix sockets,
        # and the script probes the metrics port from inside the namespace (kubelet's probes
        # reach the pod's address).
        flags.append("--network=none")
    flags += security_flags(spec.get("securityContext", {}), c.get("securityContext", {}))
    limits = c.get("resources", {}).get("limits", {})
    if "memory" in limits:
        flags.append(memory_flag(limits["memory"]))
    flags += env_flags(c, node_name)
    flags += mount_flags(ds, config_maps, c, root, sabotage)
    if "command" in c:
        flags.append("--entrypoint=" + json.dumps(c["command"]))
    return flags + extra + [c["image"]] + [str(a) for a in c.get("args", [])]


def flag_value(container, name, default):
    """The value of serve flag `name` in the container's args (`--name=V` or `--name V`)."""
    args = [str(a) for a in container.get("args", [])]
    for i, a in enumerate(args):
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
        if a == name and i + 1 < len(args):
            return args[i + 1]
    return default


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rendered")
    parser.add_argument("what",
                        choices=["image", "grace", "env", "flag", "probes", "to-host", "run"])
    parser.add_argument("rest", nargs="*")
    parser.add_argument("--root")
    parser.add_argument("--node-name", default="sim-node")
    parser.add_argument("--init")
    parser.add_argument("--sabotage")
    parser.add_argument("--extra", action="append", default=[],
                        help="a podman flag added before the image (the simulation's own)")
    args = parser.parse_intermixed_args()
    ds, config_maps = load(args.rendered)
    c = main_container(ds)
    if args.what == "image":
        print(c["image"])
    elif args.what == "grace":
        print(pod_spec(ds).get("terminationGracePeriodSeconds", 30))
    elif args.what == "env":
        value = env_of(c).get(args.rest[0])
        if value is None:
            die(f"the container sets no env {args.rest[0]}")
        print(value)
    elif args.what == "flag":
        print(flag_value(c, "--" + args.rest[0], args.rest[1]))
    elif args.what == "probes":
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", []) if "name" in p}
        for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
            probe = c.get(kind)
            if not probe:
                continue
            get = probe.get("httpGet") or die(f"{kind}: only httpGet probes are translated")
            port = get["port"]
            port = ports.get(port) or die(f"{kind}: no port {port}") if isinstance(port, str) else port
            print(kind, get["path"], port)
    elif args.what == "to-host":
        host = host_path_of(ds, c, args.rest[0])
        if host is None:
            die(f"no hostPath volume serves {args.rest[0]}")
        print(os.path.join(args.root, host.lstrip("/")))
    elif args.what == "run":
        if not args.root:
            die("run needs --root")
        out = run_args(ds, config_maps, args.root, args.node_name, args.init, args.sabotage,
                       args.extra)
        sys.stdout.write("".join(a + "\0" for a in out))


if __name__ == "__main__":
    main()
